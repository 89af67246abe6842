//! Behaviour of the fanout through its public API: our versions of the thirteen cases of
//! Pekko's `FanoutPublisherBehaviorSpec` (Pekko PR #2874; `pekko_…` tests), then the
//! producer handle (`try_send`, `blocking_send`, `send().await`, `complete`, `fail`, drop,
//! clones, the `Sink`), the shutdown rules (issue 20: a vanished producer, nobody left to
//! receive, the last subscriber leaving), the
//! processor's upstream side, and the contract items of the module docs (backpressure, late
//! subscribers, cancel, `request(0)`, panics, memory).
#![cfg(not(rs_loom))]
// Test probes use std atomics and locks directly; the facade ban targets rs-impl's sources.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use rs_api::{
    Error, Publisher, PublisherExt, SpecViolation, Subscriber, SubscriptionRef, UNBOUNDED,
};
use rs_impl::fanout::{
    self, FanoutConfig, FanoutError, FanoutProcessor, LastSubscriberPolicy, TimeoutMode,
};
use rs_impl::source;
use rs_impl::subscriber::{collect, RequestStrategy};
use rs_impl::{ProducerError, TrySendError};
use support::{quiet_deliberate_panics, Manual};

// ----- helpers -------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Sub,
    Next(u64),
    Complete,
    Error(String),
}

/// A subscriber that records its signals and whose subscription the test drives.
#[derive(Clone, Default)]
struct Probe {
    events: Arc<Mutex<Vec<Ev>>>,
    sub: Arc<Mutex<Option<SubscriptionRef>>>,
    errors: Arc<Mutex<Vec<Error>>>,
    /// Requested from `on_subscribe`.
    initial: u64,
    /// Panics in `on_next` of this element.
    panic_at: Option<u64>,
    /// The thread each `on_next` ran on.
    threads: Arc<Mutex<Vec<std::thread::ThreadId>>>,
}

impl Probe {
    fn new(initial: u64) -> Probe {
        Probe {
            initial,
            ..Probe::default()
        }
    }
    fn events(&self) -> Vec<Ev> {
        self.events.lock().unwrap().clone()
    }
    fn nexts(&self) -> Vec<u64> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Ev::Next(v) => Some(v),
                _ => None,
            })
            .collect()
    }
    fn request(&self, n: u64) {
        let s = self.sub.lock().unwrap().clone().expect("subscribed");
        s.request(n);
    }
    fn cancel(&self) {
        let s = self.sub.lock().unwrap().clone().expect("subscribed");
        s.cancel();
    }
    fn last_error(&self) -> Error {
        self.errors
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("an error")
    }
}

impl Subscriber<u64> for Probe {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.events.lock().unwrap().push(Ev::Sub);
        *self.sub.lock().unwrap() = Some(s.clone());
        if self.initial > 0 {
            s.request(self.initial);
        }
    }
    fn on_next(&mut self, v: u64) {
        self.events.lock().unwrap().push(Ev::Next(v));
        self.threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
        if self.panic_at == Some(v) {
            panic!("probe: deliberate panic at {v}");
        }
    }
    fn on_error(&mut self, e: Error) {
        self.events.lock().unwrap().push(Ev::Error(e.to_string()));
        self.errors.lock().unwrap().push(e);
        *self.sub.lock().unwrap() = None;
    }
    fn on_complete(&mut self) {
        self.events.lock().unwrap().push(Ev::Complete);
        *self.sub.lock().unwrap() = None;
    }
}

fn processor(
    initial: usize,
    max: usize,
) -> (FanoutProcessor<u64>, Arc<Manual>, FanoutProcessor<u64>) {
    let p = FanoutProcessor::with_config(FanoutConfig::new(max).grow_from(initial));
    let up = Arc::new(Manual::default());
    let mut upstream_side = p.clone();
    upstream_side.on_subscribe(up.clone());
    (p, up, upstream_side)
}

fn nexts(range: std::ops::Range<u64>) -> Vec<Ev> {
    range.map(Ev::Next).collect()
}

fn seq(parts: &[&[Ev]]) -> Vec<Ev> {
    parts.concat()
}

fn err(e: &Error) -> Ev {
    Ev::Error(e.to_string())
}

fn shutdown() -> Ev {
    Ev::Error(Error::from(FanoutError::ShutDown).to_string())
}

// ----- Pekko's FanoutPublisherBehaviorSpec, our versions --------------------------------------

#[test]
fn pekko_upstream_failure_reaches_late_subscribers_without_a_subscription() {
    let (p, _up, mut upstream) = processor(4, 4);
    let e = Error::msg("upstream failed");
    upstream.on_error(e.clone());
    let late = Probe::new(1);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(
        late.events(),
        vec![Ev::Sub, err(&e)],
        "on_subscribe first (1.9), then the error"
    );
    assert!(late.last_error().ptr_eq(&e), "the same failure");
}

#[test]
fn pekko_failure_reaches_active_and_late_subscribers() {
    let (p, _up, mut upstream) = processor(4, 4);
    let active = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(active.clone()));
    upstream.on_next(1);
    let e = Error::msg("boom");
    upstream.on_error(e.clone());
    let late = Probe::new(1);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(active.events(), vec![Ev::Sub, Ev::Next(1), err(&e)]);
    assert_eq!(late.events(), vec![Ev::Sub, err(&e)]);
}

#[test]
fn pekko_failure_reaches_all_active_subscribers_at_once_dropping_backlogs() {
    let (p, up, mut upstream) = processor(4, 4);
    let (a, b, c) = (Probe::new(UNBOUNDED), Probe::new(1), Probe::new(0));
    for s in [&a, &b, &c] {
        p.subscribe(Box::new(s.clone()));
    }
    for i in 0..3 {
        upstream.on_next(i);
    }
    let e = Error::msg("boom");
    upstream.on_error(e.clone());
    assert_eq!(a.events(), seq(&[&[Ev::Sub], &nexts(0..3), &[err(&e)]]));
    assert_eq!(
        b.events(),
        vec![Ev::Sub, Ev::Next(0), err(&e)],
        "backlog dropped"
    );
    assert_eq!(c.events(), vec![Ev::Sub, err(&e)], "without demand too");
    assert!(
        !up.cancelled.load(Ordering::SeqCst),
        "4.2: a failed upstream is not cancelled"
    );
    assert_eq!(p.stats().buffered, 0);
}

#[test]
fn pekko_completion_with_zero_subscribers_gives_late_ones_an_empty_stream() {
    let (p, _up, mut upstream) = processor(4, 4);
    upstream.on_complete();
    let late = Probe::new(0);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(
        late.events(),
        vec![Ev::Sub, Ev::Complete],
        "without a request (1.5, 2.9)"
    );
}

#[test]
fn pekko_active_and_late_subscribers_complete() {
    let (p, _up, mut upstream) = processor(4, 4);
    let active = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(active.clone()));
    upstream.on_next(7);
    upstream.on_complete();
    let late = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(active.events(), vec![Ev::Sub, Ev::Next(7), Ev::Complete]);
    assert_eq!(late.events(), vec![Ev::Sub, Ev::Complete]);
}

#[test]
fn pekko_multiple_active_subscribers_complete() {
    let p = FanoutProcessor::<u64>::with_config(FanoutConfig::new(4));
    let probes: Vec<Probe> = (0..3).map(|_| Probe::new(UNBOUNDED)).collect();
    for s in &probes {
        p.subscribe(Box::new(s.clone()));
    }
    source::range(0u64..10).subscribe_with(p.clone());
    for s in &probes {
        assert_eq!(
            s.events(),
            seq(&[&[Ev::Sub], &nexts(0..10), &[Ev::Complete]])
        );
    }
}

#[test]
fn pekko_one_of_two_cancels_before_completion_and_the_other_keeps_running() {
    let (p, up, mut upstream) = processor(1, 1);
    let (a, b) = (Probe::new(1), Probe::new(1));
    p.subscribe(Box::new(a.clone()));
    p.subscribe(Box::new(b.clone()));
    upstream.on_next(0);
    a.cancel();
    for i in 1..5 {
        assert_eq!(
            up.requested.load(Ordering::SeqCst),
            i + 1,
            "buffer 1: one element asked for at a time"
        );
        b.request(1);
        upstream.on_next(i);
    }
    upstream.on_complete();
    assert_eq!(a.events(), vec![Ev::Sub, Ev::Next(0)]);
    assert_eq!(
        b.events(),
        seq(&[&[Ev::Sub], &nexts(0..5), &[Ev::Complete]])
    );
    assert!(!up.cancelled.load(Ordering::SeqCst));
}

#[test]
fn pekko_two_concurrent_subscribers_get_the_same_elements_and_complete() {
    for _ in 0..20 {
        let (tx, p) = fanout::channel::<u64>(4);
        let (a, ra) = collect(RequestStrategy::OneByOne);
        let (b, rb) = collect(RequestStrategy::Prefetch(2));
        p.subscribe(Box::new(a));
        p.subscribe(Box::new(b));
        let producer = std::thread::spawn(move || {
            for i in 1..=3 {
                tx.blocking_send(i).unwrap();
            }
            tx.complete();
        });
        let ta = std::thread::spawn(move || ra.wait().unwrap());
        let tb = std::thread::spawn(move || rb.wait().unwrap());
        producer.join().unwrap();
        assert_eq!(ta.join().unwrap(), vec![1, 2, 3]);
        assert_eq!(tb.join().unwrap(), vec![1, 2, 3]);
    }
}

#[test]
fn pekko_slow_subscriber_drains_its_backlog_after_completion_then_late_ones_complete() {
    let (p, _up, mut upstream) = processor(4, 4);
    let (fast, slow) = (Probe::new(UNBOUNDED), Probe::new(1));
    p.subscribe(Box::new(fast.clone()));
    p.subscribe(Box::new(slow.clone()));
    for i in 0..4 {
        upstream.on_next(i);
    }
    upstream.on_complete();
    assert_eq!(
        fast.events(),
        seq(&[&[Ev::Sub], &nexts(0..4), &[Ev::Complete]])
    );
    assert_eq!(
        slow.events(),
        vec![Ev::Sub, Ev::Next(0)],
        "its backlog waits for demand"
    );
    slow.request(10);
    assert_eq!(
        slow.events(),
        seq(&[&[Ev::Sub], &nexts(0..4), &[Ev::Complete]])
    );
    // Pekko answers this late subscriber with NormalShutdown (its stage stopped when the last
    // subscriber left); here the stream completed, so a late subscriber is completed.
    let late = Probe::new(1);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(late.events(), vec![Ev::Sub, Ev::Complete]);
}

#[test]
fn pekko_last_subscriber_failing_cancels_upstream_and_late_ones_get_shutdown() {
    quiet_deliberate_panics();
    let (p, up, mut upstream) = processor(4, 4);
    let mut failing = Probe::new(UNBOUNDED);
    failing.panic_at = Some(1);
    p.subscribe(Box::new(failing.clone()));
    upstream.on_next(0);
    upstream.on_next(1);
    assert!(
        up.cancelled.load(Ordering::SeqCst),
        "the last subscriber left: upstream cancelled"
    );
    upstream.on_next(2); // in flight when the cancel reached it: dropped
    let late = Probe::new(1);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(failing.events(), vec![Ev::Sub, Ev::Next(0), Ev::Next(1)]);
    assert_eq!(late.events(), vec![Ev::Sub, shutdown()]);
    assert_eq!(
        late.last_error().downcast_ref::<FanoutError>(),
        Some(&FanoutError::ShutDown)
    );
}

#[test]
fn pekko_cancel_mode_timeout_fails_with_subscription_timeout() {
    let config =
        FanoutConfig::new(4).subscription_timeout(Duration::from_millis(50), TimeoutMode::Cancel);
    let p = FanoutProcessor::<u64>::with_config(config);
    let up = Arc::new(Manual::default());
    p.clone().on_subscribe(up.clone());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !up.cancelled.load(Ordering::SeqCst) {
        assert!(
            std::time::Instant::now() < deadline,
            "the timeout never fired"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let late = Probe::new(1);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(
        late.last_error().downcast_ref::<FanoutError>(),
        Some(&FanoutError::SubscriptionTimeout(Duration::from_millis(50)))
    );
    // The channel's producer sees it closed.
    let config =
        FanoutConfig::new(4).subscription_timeout(Duration::from_millis(20), TimeoutMode::Cancel);
    let (tx, _p) = fanout::channel_with::<u64>(config);
    assert!(tx.blocking_send(1).is_ok(), "room before anyone subscribed");
    let mut tries = 0;
    while !tx.is_closed() {
        tries += 1;
        assert!(tries < 2000, "the channel never closed");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(tx.try_send(2).unwrap_err().is_closed());
}

#[test]
fn pekko_warn_mode_timeout_keeps_accepting_subscribers() {
    let warned = Arc::new(AtomicUsize::new(0));
    let w = warned.clone();
    let config = FanoutConfig::new(4).subscription_timeout(
        Duration::from_millis(20),
        TimeoutMode::Warn(Arc::new(move |_| {
            w.fetch_add(1, Ordering::SeqCst);
        })),
    );
    let (tx, p) = fanout::channel_with::<u64>(config);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while warned.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "never warned");
        std::thread::sleep(Duration::from_millis(5));
    }
    let late = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(late.clone()));
    tx.blocking_send(5).unwrap();
    tx.complete();
    assert_eq!(late.events(), vec![Ev::Sub, Ev::Next(5), Ev::Complete]);
    assert_eq!(warned.load(Ordering::SeqCst), 1);
}

#[test]
fn pekko_abrupt_termination_the_producer_panics() {
    quiet_deliberate_panics();
    let (tx, p) = fanout::channel::<u64>(4);
    let active = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(active.clone()));
    let producer = std::thread::spawn(move || {
        let tx = tx;
        tx.blocking_send(1).unwrap();
        panic!("producer: deliberate panic");
    });
    assert!(producer.join().is_err());
    let late = Probe::new(1);
    p.subscribe(Box::new(late.clone()));
    let crashed = Error::from(ProducerError::Panicked).to_string();
    assert_eq!(
        active.events(),
        vec![Ev::Sub, Ev::Next(1), Ev::Error(crashed.clone())]
    );
    assert_eq!(
        late.events(),
        vec![Ev::Sub, Ev::Error(crashed)],
        "not mistaken for completion"
    );
}

// ----- the producer handle ---------------------------------------------------------------------

#[test]
fn try_send_hands_the_element_back_when_full_or_closed() {
    let (tx, p) = fanout::channel_with::<u64>(
        FanoutConfig::new(2).last_subscriber(LastSubscriberPolicy::CancelUpstream),
    );
    let slow = Probe::new(0);
    p.subscribe(Box::new(slow.clone()));
    tx.try_send(1).unwrap();
    tx.try_send(2).unwrap();
    assert!(matches!(tx.try_send(3), Err(TrySendError::Full(3))));
    slow.request(1);
    tx.try_send(3).unwrap(); // the slowest read one: one slot free
    assert!(tx.try_send(4).unwrap_err().is_full());
    slow.cancel(); // last subscriber gone: the channel closes (this policy)
    assert!(matches!(tx.try_send(4), Err(TrySendError::Closed(4))));
    assert!(tx.is_closed());
    assert_eq!(tx.blocking_send(5).unwrap_err().into_inner(), 5);
    assert_eq!(futures::executor::block_on(tx.send(6)).unwrap_err().0, 6);
}

#[test]
fn blocking_send_waits_for_space_and_resumes_when_the_slowest_reads() {
    let (tx, p) = fanout::channel::<u64>(2);
    let slow = Probe::new(0);
    p.subscribe(Box::new(slow.clone()));
    let producer = std::thread::spawn(move || {
        for i in 0..10 {
            tx.blocking_send(i).unwrap();
        }
        tx.complete();
    });
    let mut requested = 0;
    while slow.nexts().len() < 10 {
        std::thread::sleep(Duration::from_millis(2));
        assert!(p.stats().buffered <= 2);
        slow.request(1);
        requested += 1;
        assert!(requested < 10_000, "the producer never resumed");
    }
    producer.join().unwrap();
    assert_eq!(slow.nexts(), (0..10).collect::<Vec<_>>());
}

/// Counts wakes; the test polls by hand, so a wake that never comes shows as a hang-free
/// failure.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn async_send_is_woken_through_its_waker_when_space_frees() {
    let (tx, p) = fanout::channel_with::<u64>(
        FanoutConfig::new(1).last_subscriber(LastSubscriberPolicy::CancelUpstream),
    );
    let slow = Probe::new(0);
    p.subscribe(Box::new(slow.clone()));
    tx.try_send(0).unwrap();
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    {
        let mut fut = std::pin::pin!(tx.send(1));
        assert!(fut.as_mut().poll(&mut cx).is_pending(), "full: pending");
        assert!(fut.as_mut().poll(&mut cx).is_pending(), "still full");
        assert_eq!(counter.0.load(Ordering::SeqCst), 0, "no wake without space");
        slow.request(1); // delivers 0 on this thread, which frees the slot
        assert_eq!(
            counter.0.load(Ordering::SeqCst),
            1,
            "woken once, by the drain that freed space"
        );
        assert!(matches!(fut.as_mut().poll(&mut cx), Poll::Ready(Ok(()))));
    }
    // A dropped future withdraws its element and its registration.
    {
        let mut fut = std::pin::pin!(tx.send(2));
        assert!(fut.as_mut().poll(&mut cx).is_pending());
    }
    slow.request(2);
    assert_eq!(
        counter.0.load(Ordering::SeqCst),
        1,
        "no wake for a dropped future"
    );
    assert_eq!(slow.nexts(), vec![0, 1]);
    // Closing wakes a waiting future, which then reports the element back.
    tx.try_send(3).unwrap(); // delivered: slow had 1 outstanding
    tx.try_send(4).unwrap(); // buffered: the buffer is full again
    let mut fut = std::pin::pin!(tx.send(5));
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    slow.cancel(); // the last subscriber leaves: the channel closes
    assert_eq!(
        counter.0.load(Ordering::SeqCst),
        2,
        "closing wakes the waiting sender"
    );
    assert!(matches!(fut.as_mut().poll(&mut cx), Poll::Ready(Err(e)) if e.0 == 5));
}

#[test]
fn async_send_on_an_executor_with_a_subscriber_on_another_thread() {
    let (tx, p) = fanout::channel::<u64>(2);
    let (s, result) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(s));
    let producer = std::thread::spawn(move || {
        futures::executor::block_on(async move {
            for i in 0..1000 {
                tx.send(i).await.unwrap();
            }
            tx.complete();
        })
    });
    producer.join().unwrap();
    assert_eq!(result.wait().unwrap(), (0..1000).collect::<Vec<_>>());
}

#[test]
fn complete_fail_and_drop() {
    let (tx, p) = fanout::channel::<u64>(256);
    let a = Probe::new(1);
    p.subscribe(Box::new(a.clone()));
    tx.complete();
    assert_eq!(a.events(), vec![Ev::Sub, Ev::Complete]);

    let (tx, p) = fanout::channel::<u64>(256);
    let a = Probe::new(1);
    p.subscribe(Box::new(a.clone()));
    let e = Error::msg("producer failed");
    tx.fail(e.clone());
    assert!(a.last_error().ptr_eq(&e));

    let (tx, p) = fanout::channel::<u64>(256);
    let a = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(a.clone()));
    tx.blocking_send(1).unwrap();
    drop(tx);
    let vanished = Error::from(ProducerError::Dropped).to_string();
    assert_eq!(
        a.events(),
        vec![Ev::Sub, Ev::Next(1), Ev::Error(vanished)],
        "dropping without complete is not the end: an error, not a silent truncation"
    );
}

#[test]
fn delivery_runs_on_the_producers_thread() {
    let (tx, p) = fanout::channel::<u64>(256);
    let a = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(a.clone()));
    let producer = std::thread::spawn(move || {
        tx.blocking_send(1).unwrap();
        std::thread::current().id()
    });
    let id = producer.join().unwrap();
    assert_eq!(*a.threads.lock().unwrap(), vec![id]);
}

// ----- contract --------------------------------------------------------------------------------

#[test]
fn late_subscribers_start_at_the_oldest_retained_element() {
    let (tx, p) = fanout::channel::<u64>(8);
    // Nobody subscribed: everything is retained for the first subscriber.
    for i in 0..3 {
        tx.try_send(i).unwrap();
    }
    let (slow, fast) = (Probe::new(0), Probe::new(UNBOUNDED));
    p.subscribe(Box::new(slow.clone()));
    p.subscribe(Box::new(fast.clone()));
    for i in 3..6 {
        tx.try_send(i).unwrap();
    }
    slow.request(1); // slow read 0: retained are 1..6
    let late = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(slow.nexts(), vec![0]);
    assert_eq!(fast.nexts(), (0..6).collect::<Vec<_>>());
    assert_eq!(late.nexts(), (1..6).collect::<Vec<_>>());
    // A subscriber alone reclaims as it reads: one joining after it starts after what it read.
    let (tx, p) = fanout::channel::<u64>(8);
    for i in 0..3 {
        tx.try_send(i).unwrap();
    }
    let first = Probe::new(1);
    p.subscribe(Box::new(first.clone()));
    let second = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(second.clone()));
    assert_eq!(second.nexts(), vec![1, 2]);
}

/// The group's loop looks at no member's demand until an element reaches the nearest end of a
/// member's demand (`deliver.rs`): a member with a little demand among members with unbounded
/// demand, joining before and after them, requesting again when parked and while in the group,
/// gets exactly what it requested, through the write-through and through the buffer.
#[test]
fn a_member_with_little_demand_among_unbounded_ones_gets_exactly_its_demand() {
    let (tx, p) = fanout::channel::<u64>(4);
    let fast = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(fast.clone()));
    for i in 0..5 {
        tx.try_send(i).unwrap(); // through, to `fast` alone
    }
    let little = Probe::new(2);
    p.subscribe(Box::new(little.clone())); // joins the group at 5, its demand ending at 7
    let late = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(late.clone())); // its own end is far: 7 stays the nearest
    for i in 5..8 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(little.nexts(), vec![5, 6]); // 7 waits in the buffer: it is parked
    little.request(1); // gets 7 from the buffer and stays parked
    assert_eq!(little.nexts(), vec![5, 6, 7]);
    little.request(3); // joins the group again, its demand ending at 11
    for i in 8..12 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(little.nexts(), (5..11).collect::<Vec<_>>());
    little.request(2); // parked, 11 buffered: visited, then in the group until 13
    for i in 12..15 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(little.nexts(), (5..13).collect::<Vec<_>>());
    little.request(1); // behind (13 and 14 buffered): visited, gets 13, parked again
    assert_eq!(little.nexts(), (5..14).collect::<Vec<_>>());
    little.request(UNBOUNDED); // gets 14, joins the group with its demand ending far away
    for i in 15..20 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(little.nexts(), (5..20).collect::<Vec<_>>());
    assert_eq!(fast.nexts(), (0..20).collect::<Vec<_>>());
    assert_eq!(late.nexts(), (5..20).collect::<Vec<_>>());
    assert_eq!(p.stats().buffered, 0);
}

#[test]
fn the_fastest_leads_the_slowest_by_at_most_the_maximum() {
    let (tx, p) = fanout::channel_with::<u64>(FanoutConfig::new(4).grow_from(1));
    let (slow, fast) = (Probe::new(0), Probe::new(UNBOUNDED));
    p.subscribe(Box::new(slow.clone()));
    p.subscribe(Box::new(fast.clone()));
    let mut sent = 0;
    while tx.try_send(sent).is_ok() {
        sent += 1;
    }
    assert_eq!(sent, 4);
    assert_eq!(fast.nexts().len(), 4);
    assert_eq!(p.stats().capacity, 4, "grew 1 -> 4, no further");
    for round in 0..20 {
        slow.request(1);
        tx.try_send(sent).unwrap();
        sent += 1;
        assert!(
            tx.try_send(sent).is_err(),
            "round {round}: the lead stays at 4"
        );
        assert_eq!(fast.nexts().len() - slow.nexts().len(), 4);
    }
}

#[test]
fn upstream_demand_never_exceeds_the_free_space() {
    let (p, up, mut upstream) = processor(2, 8);
    assert_eq!(
        up.requested.load(Ordering::SeqCst),
        8,
        "the whole buffer at once"
    );
    let slow = Probe::new(0);
    p.subscribe(Box::new(slow.clone()));
    let mut sent = 0u64;
    for round in 0..200 {
        while sent < up.requested.load(Ordering::SeqCst) {
            upstream.on_next(sent);
            sent += 1;
        }
        let outstanding = up.requested.load(Ordering::SeqCst) - sent;
        let free = 8 - p.stats().buffered as u64;
        assert!(
            outstanding <= free,
            "round {round}: {outstanding} asked, {free} free"
        );
        slow.request(1 + round % 3);
    }
    assert_eq!(
        slow.nexts(),
        (0..slow.nexts().len() as u64).collect::<Vec<_>>()
    );
}

#[test]
fn processor_requests_in_batches_of_a_quarter() {
    let (p, up, mut upstream) = processor(16, 16);
    let a = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(a.clone()));
    assert_eq!(up.requested.load(Ordering::SeqCst), 16);
    for i in 0..3 {
        upstream.on_next(i);
    }
    assert_eq!(
        up.requested.load(Ordering::SeqCst),
        16,
        "3 free: below the batch of 4"
    );
    upstream.on_next(3);
    assert_eq!(up.requested.load(Ordering::SeqCst), 20);
}

#[test]
fn processor_cancels_a_second_upstream_and_fails_on_an_upstream_overflow() {
    let (p, up, mut upstream) = processor(2, 2);
    let second = Arc::new(Manual::default());
    upstream.on_subscribe(second.clone());
    assert!(second.cancelled.load(Ordering::SeqCst), "2.5");
    let a = Probe::new(0);
    p.subscribe(Box::new(a.clone()));
    upstream.on_next(0);
    upstream.on_next(1);
    upstream.on_next(2); // never requested: rule 1.1 broken upstream
    assert!(up.cancelled.load(Ordering::SeqCst));
    assert_eq!(
        a.last_error().downcast_ref::<FanoutError>(),
        Some(&FanoutError::UpstreamOverflow)
    );
}

#[test]
fn cancel_frees_the_hold_on_the_buffer_at_once() {
    let payload = Arc::new(());
    let (tx, p) = fanout::channel_with::<Arc<()>>(
        FanoutConfig::new(4).last_subscriber(LastSubscriberPolicy::KeepBuffering),
    );
    let slow = Arc::new(Mutex::new(None::<SubscriptionRef>));
    struct Hold(Arc<Mutex<Option<SubscriptionRef>>>);
    impl Subscriber<Arc<()>> for Hold {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            *self.0.lock().unwrap() = Some(s);
        }
        fn on_next(&mut self, _: Arc<()>) {}
        fn on_error(&mut self, _: Error) {}
        fn on_complete(&mut self) {}
    }
    p.subscribe(Box::new(Hold(slow.clone())));
    let (fast, fast_result) = collect::<Arc<()>>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(fast));
    for _ in 0..4 {
        tx.try_send(payload.clone()).unwrap();
    }
    assert!(tx.try_send(payload.clone()).unwrap_err().is_full());
    assert_eq!(
        Arc::strong_count(&payload),
        1 + 4 + 4,
        "4 buffered, 4 collected"
    );
    let s = slow.lock().unwrap().take().unwrap();
    s.cancel();
    assert_eq!(
        Arc::strong_count(&payload),
        1 + 4,
        "the buffer let go at once"
    );
    tx.try_send(payload.clone()).unwrap();
    s.cancel(); // 3.7
    s.request(1); // 3.6
    tx.complete();
    drop(tx);
    assert_eq!(fast_result.wait().unwrap().len(), 5);
    assert_eq!(Arc::strong_count(&payload), 1, "no leak");
}

#[test]
fn keep_buffering_for_the_next_subscriber() {
    let (tx, p) = fanout::channel_with::<u64>(
        FanoutConfig::new(4).last_subscriber(LastSubscriberPolicy::KeepBuffering),
    );
    let a = Probe::new(2);
    p.subscribe(Box::new(a.clone()));
    for i in 0..4 {
        tx.try_send(i).unwrap();
    }
    a.cancel();
    assert!(!tx.is_closed());
    tx.try_send(4).unwrap();
    tx.try_send(5).unwrap();
    assert!(tx.try_send(6).unwrap_err().is_full(), "up to the maximum");
    let b = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(b.clone()));
    assert_eq!(a.nexts(), vec![0, 1]);
    assert_eq!(
        b.nexts(),
        vec![2, 3, 4, 5],
        "what the last one had not read, and after"
    );
}

#[test]
fn request_zero_fails_only_that_subscriber() {
    let (tx, p) = fanout::channel::<u64>(4);
    let (bad, good) = (Probe::new(1), Probe::new(UNBOUNDED));
    p.subscribe(Box::new(bad.clone()));
    p.subscribe(Box::new(good.clone()));
    tx.blocking_send(0).unwrap();
    bad.request(0);
    for i in 1..10 {
        tx.blocking_send(i).unwrap();
    }
    tx.complete();
    assert_eq!(
        bad.last_error().spec_violation(),
        Some(&SpecViolation::NonPositiveRequest)
    );
    assert!(bad.last_error().to_string().contains("3.9"));
    assert_eq!(bad.nexts(), vec![0]);
    assert_eq!(
        good.events(),
        seq(&[&[Ev::Sub], &nexts(0..10), &[Ev::Complete]])
    );
}

#[test]
fn demand_saturates_and_large_requests_mean_unbounded() {
    let (tx, p) = fanout::channel::<u64>(4);
    let a = Probe::new(0);
    p.subscribe(Box::new(a.clone()));
    a.request(i64::MAX as u64 / 2);
    a.request(i64::MAX as u64 / 2);
    a.request(UNBOUNDED);
    a.request(UNBOUNDED);
    for i in 0..100 {
        tx.blocking_send(i).unwrap();
    }
    tx.complete();
    assert_eq!(
        a.events(),
        seq(&[&[Ev::Sub], &nexts(0..100), &[Ev::Complete]])
    );
}

#[test]
fn a_panicking_subscriber_is_cancelled_and_the_others_lose_nothing() {
    quiet_deliberate_panics();
    let reported = Arc::new(AtomicUsize::new(0));
    let r = reported.clone();
    let _ = rs_impl::panics::set_reporter(move |v| {
        if v.to_string().contains("deliberate") {
            r.fetch_add(1, Ordering::SeqCst);
        }
    });
    let (tx, p) = fanout::channel::<u64>(2);
    let mut bad = Probe::new(UNBOUNDED);
    bad.panic_at = Some(3);
    let good: Vec<Probe> = (0..3).map(|_| Probe::new(UNBOUNDED)).collect();
    p.subscribe(Box::new(bad.clone()));
    for g in &good {
        p.subscribe(Box::new(g.clone()));
    }
    for i in 0..20 {
        tx.blocking_send(i).unwrap();
    }
    tx.complete();
    assert_eq!(bad.nexts(), vec![0, 1, 2, 3]);
    for g in &good {
        assert_eq!(
            g.events(),
            seq(&[&[Ev::Sub], &nexts(0..20), &[Ev::Complete]])
        );
    }
    // The reporter is process-wide; another test may have installed it first.
    if reported.load(Ordering::SeqCst) > 0 {
        assert_eq!(reported.load(Ordering::SeqCst), 1);
    }
}

/// Several subscribers panic on the same element, two of them next to each other in the
/// group and one first: the group's loop guards a whole run of deliveries with one
/// `catch_unwind` and resumes after each panicking member, so every member after a panicking
/// one still gets that element and all later ones, each exactly once, through the
/// write-through and through the buffer (one subscriber out of demand keeps elements buffered).
#[test]
fn several_subscribers_panicking_on_one_element_do_not_cost_the_others_anything() {
    quiet_deliberate_panics();
    for buffered in [false, true] {
        let (tx, p) = fanout::channel::<u64>(16);
        let mut probes = Vec::new();
        for i in 0..7 {
            let mut probe = Probe::new(UNBOUNDED);
            if [0, 3, 4].contains(&i) {
                probe.panic_at = Some(5);
            }
            p.subscribe(Box::new(probe.clone()));
            probes.push(probe);
        }
        let lagging = Probe::new(if buffered { 1 } else { UNBOUNDED });
        p.subscribe(Box::new(lagging.clone()));
        for i in 0..12 {
            tx.blocking_send(i).unwrap();
        }
        let stats = p.stats();
        assert_eq!(stats.subscribers, 5, "buffered: {buffered}");
        assert_eq!(stats.buffered, if buffered { 11 } else { 0 });
        tx.complete();
        if buffered {
            lagging.request(UNBOUNDED);
        }
        for (i, probe) in probes.iter().enumerate() {
            if [0, 3, 4].contains(&i) {
                assert_eq!(probe.nexts(), (0..6).collect::<Vec<_>>(), "probe {i}");
            } else {
                assert_eq!(
                    probe.events(),
                    seq(&[&[Ev::Sub], &nexts(0..12), &[Ev::Complete]]),
                    "probe {i}, buffered: {buffered}"
                );
            }
        }
        assert_eq!(
            lagging.events(),
            seq(&[&[Ev::Sub], &nexts(0..12), &[Ev::Complete]])
        );
    }
}

/// The steady state's write-through (empty buffer, every subscriber caught up): the last
/// subscriber of the group gets the element itself. When it panics in `on_next`, it took the
/// element: nothing is retained for it, and the counters come out as through the buffer.
#[test]
fn the_last_subscriber_of_the_group_panicking_on_a_written_through_element() {
    quiet_deliberate_panics();
    let (tx, p) = fanout::channel::<u64>(4);
    let good = Probe::new(UNBOUNDED);
    let mut bad = Probe::new(UNBOUNDED);
    bad.panic_at = Some(3);
    p.subscribe(Box::new(good.clone()));
    p.subscribe(Box::new(bad.clone()));
    for i in 0..10 {
        tx.blocking_send(i).unwrap();
    }
    let stats = p.stats();
    assert_eq!(bad.nexts(), vec![0, 1, 2, 3]);
    assert_eq!(good.nexts(), (0..10).collect::<Vec<_>>());
    assert_eq!(
        (
            stats.subscribers,
            stats.buffered,
            stats.elements,
            stats.deliveries
        ),
        (1, 0, 10, 4 + 10)
    );
    tx.complete();
    assert_eq!(
        good.events(),
        seq(&[&[Ev::Sub], &nexts(0..10), &[Ev::Complete]])
    );
}

/// As above, with the last subscriber of the group out of demand: the element is retained
/// for it (as if written before the broadcast), the others keep going, and it reads the
/// backlog when it requests.
#[test]
fn the_last_subscriber_of_the_group_out_of_demand_on_a_written_through_element() {
    let (tx, p) = fanout::channel::<u64>(4);
    let good = Probe::new(UNBOUNDED);
    let limited = Probe::new(2);
    p.subscribe(Box::new(good.clone()));
    p.subscribe(Box::new(limited.clone()));
    for i in 0..4 {
        tx.blocking_send(i).unwrap();
    }
    assert_eq!(limited.nexts(), vec![0, 1]);
    let stats = p.stats();
    assert_eq!((stats.buffered, stats.deliveries), (2, 4 + 2));
    limited.request(5);
    let stats = p.stats();
    assert_eq!((stats.buffered, stats.deliveries), (0, 4 + 4));
    for i in 4..8 {
        tx.blocking_send(i).unwrap();
    }
    assert_eq!(limited.nexts(), (0..7).collect::<Vec<_>>());
    assert_eq!(p.stats().buffered, 1);
    tx.complete();
    assert_eq!(
        good.events(),
        seq(&[&[Ev::Sub], &nexts(0..8), &[Ev::Complete]])
    );
    limited.request(1);
    assert_eq!(
        limited.events(),
        seq(&[&[Ev::Sub], &nexts(0..8), &[Ev::Complete]])
    );
}

#[test]
fn panics_in_on_subscribe_and_terminal_signals_do_not_escape() {
    quiet_deliberate_panics();
    struct Boom(&'static str);
    impl Subscriber<u64> for Boom {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(UNBOUNDED);
            if self.0 == "subscribe" {
                panic!("deliberate on_subscribe");
            }
        }
        fn on_next(&mut self, _: u64) {}
        fn on_error(&mut self, _: Error) {
            panic!("deliberate on_error");
        }
        fn on_complete(&mut self) {
            panic!("deliberate on_complete");
        }
    }
    let (tx, p) = fanout::channel_with::<u64>(
        FanoutConfig::new(2).last_subscriber(LastSubscriberPolicy::KeepBuffering),
    );
    p.subscribe(Box::new(Boom("subscribe")));
    p.subscribe(Box::new(Boom("complete")));
    tx.blocking_send(1).unwrap();
    tx.complete();
    let (tx, p) = fanout::channel::<u64>(2);
    p.subscribe(Box::new(Boom("error")));
    tx.fail(Error::msg("x"));
    p.subscribe(Box::new(Boom("error")));
}

/// The size rule: a capacity of 0 (or above the largest) panics with a clear message, as
/// tokio's `mpsc::channel(0)` does; nothing is silently rounded up to 1.
#[test]
#[should_panic(expected = "capacity of 0")]
fn a_capacity_of_zero_panics() {
    let _ = fanout::channel::<u64>(0);
}

#[test]
#[should_panic(expected = "above the largest supported")]
fn a_capacity_above_the_largest_panics() {
    let _ = FanoutProcessor::<u64>::new(fanout::MAX_CAPACITY + 1);
}

#[test]
#[should_panic(expected = "above its capacity")]
fn an_initial_capacity_above_the_capacity_panics() {
    let _ = FanoutConfig::new(2).grow_from(3);
}

/// A fanout given a capacity starts its buffer at that capacity (issue 24: `new(1024)` used to
/// start at 16 and grow while running); growth only when asked for, rounded to powers of two.
#[test]
fn the_buffer_starts_at_its_capacity_unless_growth_is_asked_for() {
    let (_tx, p) = fanout::channel::<u64>(1024);
    let stats = p.stats();
    assert_eq!((stats.capacity, stats.max_capacity), (1024, 1024));
    let c = FanoutConfig::new(5).grow_from(3);
    assert_eq!((c.initial_capacity(), c.capacity()), (4, 8));
    let (tx, p) = fanout::channel_with::<u64>(FanoutConfig::new(8).grow_from(2));
    assert_eq!(p.stats().capacity, 2);
    for i in 0..5 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(p.stats().capacity, 8, "grew 2 -> 4 -> 8 while full");
}

#[test]
fn many_subscribers_many_threads_no_loss() {
    // Subscribers request from their own threads while the producer sends from another.
    for _ in 0..5 {
        let (tx, p) = fanout::channel_with::<u64>(FanoutConfig::new(16).grow_from(2));
        let handles: Vec<_> = (0..8)
            .map(|k| {
                let (s, r) = collect(if k % 2 == 0 {
                    RequestStrategy::OneByOne
                } else {
                    RequestStrategy::Prefetch(3)
                });
                p.subscribe(Box::new(s));
                r
            })
            .collect();
        let producer = std::thread::spawn(move || {
            for i in 0..5_000 {
                tx.blocking_send(i).unwrap();
            }
            tx.complete();
        });
        let waiters: Vec<_> = handles
            .into_iter()
            .map(|r| std::thread::spawn(move || r.wait().unwrap()))
            .collect();
        producer.join().unwrap();
        for w in waiters {
            assert_eq!(w.join().unwrap(), (0..5_000).collect::<Vec<_>>());
        }
    }
}

/// A subscriber that blocks in `on_next` of one element until the test lets it go.
struct Blocking {
    probe: Probe,
    at: u64,
    entered: std::sync::mpsc::Sender<()>,
    release: Arc<Mutex<std::sync::mpsc::Receiver<()>>>,
}

impl Subscriber<u64> for Blocking {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.probe.on_subscribe(s);
    }
    fn on_next(&mut self, v: u64) {
        self.probe.on_next(v);
        if v == self.at {
            self.entered.send(()).unwrap();
            self.release.lock().unwrap().recv().unwrap();
        }
    }
    fn on_error(&mut self, e: Error) {
        self.probe.on_error(e);
    }
    fn on_complete(&mut self) {
        self.probe.on_complete();
    }
}

/// A `subscribe` that returned before a `send` gets that element, also when both are queued
/// for a pass on another thread: the pass takes the join before the element. (Taken the other
/// way round, the element went to the group and was reclaimed before the joiner joined, one
/// position later.)
#[test]
fn a_subscriber_queued_before_a_send_gets_the_element_when_another_thread_drains() {
    let (tx, p) = fanout::channel::<u64>(8);
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let a = Probe::new(1);
    p.subscribe(Box::new(Blocking {
        probe: a.clone(),
        at: 1,
        entered: entered_tx,
        release: Arc::new(Mutex::new(release_rx)),
    }));
    tx.blocking_send(0).unwrap(); // A takes 0 and is out of demand
    tx.blocking_send(1).unwrap(); // buffered for A

    // Another thread's request makes it the drainer; A blocks in on_next(1) there.
    let a2 = a.clone();
    let drainer = std::thread::spawn(move || a2.request(2));
    entered.recv().unwrap();
    // Both queued for the drainer: the join, then the element.
    let c = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(c.clone()));
    tx.try_send(2).unwrap();
    assert!(c.events().is_empty(), "queued: the other thread drains");
    release.send(()).unwrap();
    drainer.join().unwrap();
    assert_eq!(a.nexts(), vec![0, 1, 2]);
    assert_eq!(
        c.nexts(),
        vec![2],
        "the element sent after subscribe returned"
    );
    tx.complete();
    assert_eq!(c.events().last(), Some(&Ev::Complete));
    assert_eq!(a.events().last(), Some(&Ev::Complete));
}

// ----- issue 20: how a fanout channel ends ---------------------------------------------------

/// Item 1: the last sender dropped without `complete` is not the end: every subscriber, and
/// every later one, gets `on_error(ProducerError::Dropped)` after what was sent, never
/// `on_complete` (it used to complete: a silent truncation).
#[test]
fn a_vanished_producer_ends_the_stream_with_an_error_not_on_complete() {
    let (tx, p) = fanout::channel::<u64>(8);
    let a = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(a.clone()));
    let tx2 = tx.clone();
    tx.try_send(1).unwrap();
    drop(tx); // another handle lives: nothing ends
    assert_eq!(a.events(), vec![Ev::Sub, Ev::Next(1)]);
    tx2.try_send(2).unwrap();
    drop(tx2); // the last one: the producer vanished
    let vanished = Ev::Error(Error::from(ProducerError::Dropped).to_string());
    assert_eq!(
        a.events(),
        vec![Ev::Sub, Ev::Next(1), Ev::Next(2), vanished.clone()]
    );
    assert_eq!(
        a.last_error().downcast_ref::<ProducerError>(),
        Some(&ProducerError::Dropped)
    );
    let late = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(late.clone()));
    assert_eq!(late.events(), vec![Ev::Sub, vanished]);
}

/// Item 1, the panicking producer: a handle dropped while its thread panics fails the stream
/// with `ProducerError::Panicked` at once, even while other handles live.
#[test]
fn a_handle_dropped_in_a_panic_fails_the_stream_although_other_handles_live() {
    quiet_deliberate_panics();
    let (tx, p) = fanout::channel::<u64>(8);
    let a = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(a.clone()));
    let worker = tx.clone();
    let t = std::thread::spawn(move || {
        worker.try_send(1).unwrap();
        panic!("worker: deliberate panic");
    });
    assert!(t.join().is_err());
    assert_eq!(
        a.last_error().downcast_ref::<ProducerError>(),
        Some(&ProducerError::Panicked)
    );
    assert!(tx.is_closed(), "the survivors' sends fail");
    assert!(tx.try_send(2).unwrap_err().is_closed());
}

/// Item 2: with every publisher handle dropped and no subscriber, nobody can ever receive:
/// the channel closes, `is_closed` is true, a waiting send is woken and fails instead of
/// waiting forever (it used to block forever), and the buffer is dropped.
#[test]
fn with_every_publisher_dropped_and_no_subscriber_send_fails_instead_of_blocking() {
    let payload = Arc::new(0u64);
    let (tx, p) = fanout::channel::<Arc<u64>>(2);
    let p2 = p.clone();
    tx.try_send(payload.clone()).unwrap();
    tx.try_send(payload.clone()).unwrap();
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(tx.send(payload.clone()));
    assert!(fut.as_mut().poll(&mut cx).is_pending(), "full: it waits");
    drop(p);
    assert!(!tx.is_closed(), "a publisher handle is left");
    drop(p2);
    assert!(tx.is_closed(), "nobody can subscribe, nobody is subscribed");
    assert_eq!(
        counter.0.load(Ordering::SeqCst),
        1,
        "the waiting send was woken"
    );
    assert!(matches!(fut.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
    assert!(tx.try_send(payload.clone()).unwrap_err().is_closed());
    assert!(
        tx.blocking_send(payload.clone()).is_err(),
        "no wait: closed"
    );
    assert_eq!(Arc::strong_count(&payload), 1, "the buffer was dropped");
}

/// Item 2 with subscribers: while a subscriber is left the publisher handles are not needed;
/// the channel closes when the last subscriber leaves, and the error says why.
#[test]
fn with_every_publisher_dropped_the_channel_closes_when_its_last_subscriber_leaves() {
    let (tx, p) = fanout::channel::<u64>(4);
    let a = Probe::new(UNBOUNDED);
    p.subscribe(Box::new(a.clone()));
    drop(p);
    tx.try_send(1).unwrap();
    assert!(!tx.is_closed());
    a.cancel();
    assert!(tx.is_closed());
    assert!(tx.try_send(2).unwrap_err().is_closed());
    assert_eq!(a.nexts(), vec![1]);
    let why = Error::from(FanoutError::PublishersDropped).to_string();
    assert!(why.contains("nobody can receive"), "{why}");
}

/// Item 3: the first subscriber failing (here `request(0)`) before the others join does not
/// close a channel whose producer is still sending (it used to: the default shut the channel
/// down, the producer got "closed" and later subscribers a shutdown error). They get what was
/// retained and everything after.
#[test]
fn the_last_subscriber_leaving_is_not_the_end_of_a_channel_in_either_order() {
    for first_fails_first in [true, false] {
        let (tx, p) = fanout::channel::<u64>(8);
        let first = Probe::new(1);
        p.subscribe(Box::new(first.clone()));
        tx.try_send(0).unwrap();
        let second = Probe::new(UNBOUNDED);
        if first_fails_first {
            first.request(0); // the only subscriber leaves
            tx.try_send(1).expect("still open: the producer is sending");
            p.subscribe(Box::new(second.clone()));
        } else {
            p.subscribe(Box::new(second.clone()));
            first.request(0);
            tx.try_send(1).unwrap();
        }
        tx.try_send(2).unwrap();
        tx.complete();
        assert_eq!(
            first.last_error().spec_violation(),
            Some(&SpecViolation::NonPositiveRequest)
        );
        // The first one read 0 before it left, so 0 is not retained for the second.
        assert_eq!(
            second.nexts(),
            vec![1, 2],
            "first fails first: {first_fails_first}"
        );
        assert_eq!(second.events().last(), Some(&Ev::Complete));
    }
}

/// Item 3, the chosen policy: with `CancelUpstream` the channel does shut down, and the error
/// a later subscriber gets says why.
#[test]
fn a_channel_shuts_down_with_its_last_subscriber_only_when_asked_and_says_why() {
    let (tx, p) = fanout::channel_with::<u64>(
        FanoutConfig::new(8).last_subscriber(LastSubscriberPolicy::CancelUpstream),
    );
    let a = Probe::new(1);
    p.subscribe(Box::new(a.clone()));
    a.request(0);
    assert!(tx.is_closed());
    // The producer learns why: the shutdown, as the subscribers that come later do.
    match tx.closed_reason() {
        Some(rs_impl::CloseReason::Failed(e)) => assert_eq!(
            e.downcast_ref::<FanoutError>(),
            Some(&FanoutError::ShutDown),
            "{e}"
        ),
        other => panic!("the producer must see the shutdown as the reason, saw {other:?}"),
    }
    let late = Probe::new(1);
    p.subscribe(Box::new(late.clone()));
    let e = late.last_error();
    assert_eq!(
        e.downcast_ref::<FanoutError>(),
        Some(&FanoutError::ShutDown)
    );
    assert!(
        e.to_string()
            .contains("LastSubscriberPolicy::CancelUpstream"),
        "the error names the policy that closed it: {e}"
    );
}

/// What one subscriber of the scenario saw.
#[derive(Default)]
struct Seen {
    subscribed: usize,
    nexts: Vec<u64>,
    completes: usize,
    errors: Vec<Error>,
}

/// A scenario subscriber: unbounded demand; panics in the `on_next` after its `panic_next`
/// flag is set.
#[derive(Clone, Default)]
struct Actor {
    seen: Arc<Mutex<Seen>>,
    sub: Arc<Mutex<Option<SubscriptionRef>>>,
    panic_next: Arc<std::sync::atomic::AtomicBool>,
}

impl Subscriber<u64> for Actor {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.seen.lock().unwrap().subscribed += 1;
        *self.sub.lock().unwrap() = Some(s.clone());
        s.request(UNBOUNDED);
    }
    fn on_next(&mut self, v: u64) {
        self.seen.lock().unwrap().nexts.push(v);
        if self.panic_next.load(Ordering::SeqCst) {
            panic!("scenario: deliberate panic at {v}");
        }
    }
    fn on_error(&mut self, e: Error) {
        self.seen.lock().unwrap().errors.push(e);
    }
    fn on_complete(&mut self) {
        self.seen.lock().unwrap().completes += 1;
    }
}

/// One step of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Subscriber `i` joins.
    Join(usize),
    /// Subscriber `i` fails (by `request(0)`, or by panicking on the next element).
    Fail(usize),
    /// Subscriber `i` cancels.
    Leave(usize),
    /// The producer ends: drops its last handle early (or completes).
    ProducerEnds,
}

/// Every order of `steps` in which each subscriber joins before it fails or leaves.
fn orders(steps: &[Step]) -> Vec<Vec<Step>> {
    fn go(rest: &mut Vec<Step>, done: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        if rest.is_empty() {
            out.push(done.clone());
            return;
        }
        for k in 0..rest.len() {
            let step = rest[k];
            let ready = match step {
                Step::Fail(i) | Step::Leave(i) => done.contains(&Step::Join(i)),
                _ => true,
            };
            if !ready {
                continue;
            }
            rest.remove(k);
            done.push(step);
            go(rest, done, out);
            done.pop();
            rest.insert(k, step);
        }
    }
    let mut out = Vec::new();
    go(&mut steps.to_vec(), &mut Vec::new(), &mut out);
    out
}

/// The scenario's reference: the next position, the oldest one retained, who is live, and
/// for each subscriber the elements it must see. Every live subscriber has unbounded demand,
/// so while anyone is live nothing is retained.
struct Reference {
    write: u64,
    read: u64,
    live: [bool; 4],
    expected: Vec<Vec<u64>>,
}

impl Reference {
    fn new() -> Self {
        Reference {
            write: 0,
            read: 0,
            live: [false; 4],
            expected: vec![Vec::new(); 4],
        }
    }

    /// Subscriber `i` joins, the stream still `open` or not. A live joiner, or a late one
    /// after completion, gets the retained backlog (after a failure the backlog is gone).
    fn join(&mut self, i: usize, open: bool, completed: bool) {
        if open || completed {
            self.expected[i].extend(self.read..self.write);
            self.read = self.write;
        }
        self.live[i] = open;
    }

    /// The producer sends the next element, if it still has a sender; the channel must take
    /// it (it is never full here, and subscribers leaving never close it).
    fn send(&mut self, tx: Option<&fanout::FanoutSender<u64>>, what: &str) {
        let Some(tx) = tx else { return };
        tx.try_send(self.write)
            .unwrap_or_else(|e| panic!("{what}: {e} while the producer is live"));
        for (i, live) in self.live.iter().enumerate() {
            if *live {
                self.expected[i].push(self.write);
            }
        }
        self.write += 1;
        if self.live.iter().any(|l| *l) {
            self.read = self.write;
        }
    }
}

/// The acceptance scenario for issue 20, items 1–4: a fanout channel whose subscribers join,
/// fail and leave in every order, and whose producer drops its handle early (or completes),
/// with an element sent after every step. All on the test thread through `try_send`, so it
/// cannot hang: it is bounded by its count of operations. In every order:
///
/// * the channel never refuses a send while its producer is live (capacity 64 is never
///   reached, and subscribers leaving never close it: item 3);
/// * no element a live subscriber asked for is lost: each subscriber gets exactly the
///   elements from the oldest one retained when it joined (as a reference computes it) up to
///   the moment it left, in order;
/// * every subscriber ends with the terminal signal the docs promise: `on_error(Dropped)`
///   after a vanished producer (item 1), `on_complete` after `complete`, the 3.9 error after
///   `request(0)`, nothing after a cancel or a panic; a subscriber joining after the end gets
///   `on_subscribe` and the same terminal signal;
/// * the subscribers' handles (item 4): a `collect` handle dropped at its leave step cancels
///   (checked through the subscriber count).
#[test]
fn scenario_subscribers_join_fail_and_leave_in_every_order_and_the_producer_drops_early() {
    quiet_deliberate_panics();
    const A: usize = 0; // stays to the end
    const B: usize = 1; // fails
    const C: usize = 2; // leaves
    const LATE: usize = 3; // joins after the end
    let steps = [
        Step::Join(A),
        Step::Join(B),
        Step::Fail(B),
        Step::Join(C),
        Step::Leave(C),
        Step::ProducerEnds,
    ];
    let all = orders(&steps);
    assert_eq!(all.len(), 180, "6! / 2 / 2 orders");
    let mut operations = 0u64;
    for order in &all {
        for (complete, panic) in [(false, false), (false, true), (true, false), (true, true)] {
            let what = format!("{order:?}, complete: {complete}, fail by panic: {panic}");
            let (tx, p) = fanout::channel::<u64>(64);
            let mut tx = Some(tx);
            let actors: Vec<Actor> = (0..=LATE).map(|_| Actor::default()).collect();
            // C is a `collect` subscriber whose handle is dropped when it leaves (item 4).
            let mut c_handle = None;
            let mut r = Reference::new();
            // Whether B failed before the producer ended (else the end reached it first).
            let mut b_failed_live = false;
            for step in order {
                operations += 1;
                match *step {
                    Step::Join(i) => {
                        if i == C {
                            let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
                            c_handle = Some(h);
                            p.subscribe(Box::new(s));
                        } else {
                            p.subscribe(Box::new(actors[i].clone()));
                        }
                        r.join(i, tx.is_some(), complete);
                    }
                    Step::Fail(i) => {
                        b_failed_live = tx.is_some();
                        if panic {
                            actors[i].panic_next.store(true, Ordering::SeqCst);
                            if r.live[i] {
                                // It gets this element and panics on it.
                                operations += 1;
                                r.send(tx.as_ref(), &what);
                            }
                        } else {
                            let s = actors[i].sub.lock().unwrap().clone().unwrap();
                            s.request(0);
                        }
                        r.live[i] = false;
                    }
                    Step::Leave(i) => {
                        drop(c_handle.take()); // dropping the handle cancels (item 4)
                        r.live[i] = false;
                    }
                    Step::ProducerEnds => {
                        let t = tx.take().unwrap();
                        if complete {
                            t.complete();
                        }
                        drop(t);
                        r.live = [false; 4];
                    }
                }
                operations += 1;
                r.send(tx.as_ref(), &what);
            }
            p.subscribe(Box::new(actors[LATE].clone()));
            r.join(LATE, false, complete);
            operations += 1;
            // What everyone saw.
            let vanished =
                |e: &Error| e.downcast_ref::<ProducerError>() == Some(&ProducerError::Dropped);
            for i in [A, B, LATE] {
                let seen = actors[i].seen.lock().unwrap();
                assert_eq!(
                    seen.subscribed, 1,
                    "{what}: subscriber {i}: one on_subscribe"
                );
                assert_eq!(
                    seen.nexts, r.expected[i],
                    "{what}: subscriber {i}'s elements"
                );
                let (completes, errors) = (seen.completes, &seen.errors);
                match i {
                    B if b_failed_live && !panic => {
                        assert_eq!((completes, errors.len()), (0, 1), "{what}: B");
                        assert_eq!(
                            errors[0].spec_violation(),
                            Some(&SpecViolation::NonPositiveRequest),
                            "{what}: B"
                        );
                    }
                    B if b_failed_live => {
                        assert_eq!((completes, errors.len()), (0, 0), "{what}: B panicked")
                    }
                    _ if complete => assert_eq!((completes, errors.len()), (1, 0), "{what}: {i}"),
                    _ => {
                        assert_eq!((completes, errors.len()), (0, 1), "{what}: {i}");
                        assert!(vanished(&errors[0]), "{what}: {i}: {}", errors[0]);
                    }
                }
            }
            assert_eq!(
                p.stats().subscribers,
                0,
                "{what}: C's dropped handle cancelled it"
            );
        }
    }
    assert!(operations < 20_000, "bounded: {operations} operations");
}

/// One step of the paced scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paced {
    /// Subscriber `i` joins (A = 0 requests one element per step; C = 1 requests in bulk).
    Join(usize),
    /// Subscriber `i` cancels.
    Leave(usize),
    /// Every publisher handle is dropped (nobody can join any more).
    DropPublisher,
    /// The producer ends: drops its last handle early (or completes).
    ProducerEnds,
}

/// The acceptance scenario for issue 20, items 1–4, with what the first one leaves out:
/// subscribers at **different paces** (A requests one element per step, C in bulk), a
/// buffer small enough that the slow one holds the producer back (capacity 4: sends come
/// back `Full`, and the element is retried after the next step), **every publisher handle
/// dropped** at any point, and the elements of a subscriber that leaves checked too. Every
/// order of the steps (each subscriber joins before it leaves and before the publisher is
/// dropped), with the producer completing or vanishing. All on the test thread through
/// `try_send`: bounded by its count of operations, it cannot hang. In every order:
///
/// * each subscriber gets a gap-free, in-order run of the elements (no loss, no duplicate):
///   A from the oldest one retained when it joined; A never gets more than it requested, and
///   everything it requested while the producer was live and had sent it;
/// * the channel refuses a send as `Closed` only when nobody can receive (every publisher
///   handle dropped and no subscriber left: item 2), and then says why
///   ([`FanoutError::PublishersDropped`] in `closed_reason`); before that only `Full`;
/// * the terminal signals: `on_complete` after everything (A, after it asks for the rest)
///   when the producer completed, `on_error(Dropped)` when it vanished (item 1), nothing
///   after a cancel (a cancelled subscriber gets nothing more).
#[test]
fn scenario_paced_subscribers_a_dropped_publisher_and_a_vanishing_producer_in_every_order() {
    const A: usize = 0;
    const C: usize = 1;
    let steps = [
        Paced::Join(A),
        Paced::Join(C),
        Paced::Leave(A),
        Paced::Leave(C),
        Paced::DropPublisher,
        Paced::ProducerEnds,
    ];
    // Every order in which a subscriber joins before it leaves and before the publisher
    // handles are dropped.
    fn go(rest: &mut Vec<Paced>, done: &mut Vec<Paced>, out: &mut Vec<Vec<Paced>>) {
        if rest.is_empty() {
            out.push(done.clone());
            return;
        }
        for k in 0..rest.len() {
            let step = rest[k];
            let ready = match step {
                Paced::Leave(i) => done.contains(&Paced::Join(i)),
                Paced::DropPublisher => {
                    done.contains(&Paced::Join(A)) && done.contains(&Paced::Join(C))
                }
                _ => true,
            };
            if ready {
                rest.remove(k);
                done.push(step);
                go(rest, done, out);
                done.pop();
                rest.insert(k, step);
            }
        }
    }
    let mut all = Vec::new();
    go(&mut steps.to_vec(), &mut Vec::new(), &mut all);
    assert_eq!(all.len(), 96, "the orders the constraints allow");
    let mut operations = 0u64;
    for order in &all {
        for complete in [false, true] {
            let what = format!("{order:?}, complete: {complete}");
            let (tx, p) = fanout::channel::<u64>(4);
            let mut tx = Some(tx);
            let mut p = Some(p);
            let probes = [Probe::new(1), Probe::new(1_000)];
            let mut joined = [false; 2];
            let mut left = [false; 2];
            // Left while still subscribed (before a terminal signal reached it).
            let mut cancelled_live = [false; 2];
            let mut requested_a = 0u64; // A's demand in all, while the producer was live
            let mut next = 0u64; // the next element to send
            let mut closed_seen = false;
            for step in order {
                operations += 1;
                match *step {
                    Paced::Join(i) => {
                        p.as_ref()
                            .expect("joins come first")
                            .subscribe(Box::new(probes[i].clone()));
                        joined[i] = true;
                        if i == A && tx.is_some() {
                            requested_a += 1;
                        }
                    }
                    Paced::Leave(i) => {
                        if probes[i].sub.lock().unwrap().is_some() {
                            probes[i].cancel();
                            cancelled_live[i] = true;
                        }
                        left[i] = true;
                    }
                    Paced::DropPublisher => drop(p.take()),
                    Paced::ProducerEnds => {
                        let t = tx.take().expect("ends once");
                        if complete {
                            t.complete();
                        }
                        drop(t);
                    }
                }
                // A asks for one more per step while it is subscribed.
                if joined[A] && !left[A] && probes[A].sub.lock().unwrap().is_some() {
                    probes[A].request(1);
                    if tx.is_some() {
                        requested_a += 1;
                    }
                }
                // The producer sends up to two elements per step.
                if let Some(t) = tx.as_ref() {
                    for _ in 0..2 {
                        operations += 1;
                        match t.try_send(next) {
                            Ok(()) => next += 1,
                            Err(TrySendError::Full(_)) => break,
                            Err(TrySendError::Closed(_)) => {
                                let nobody = p.is_none() && left[A] && left[C];
                                assert!(nobody, "{what}: Closed while someone can receive");
                                let why = t.closed_reason().expect("a closed channel says why");
                                match why {
                                    rs_impl::CloseReason::Failed(e) => assert_eq!(
                                        e.downcast_ref::<FanoutError>(),
                                        Some(&FanoutError::PublishersDropped),
                                        "{what}"
                                    ),
                                    other => panic!("{what}: closed because {other}"),
                                }
                                closed_seen = true;
                                break;
                            }
                        }
                    }
                }
            }
            // Nobody left to receive while the producer was live: the channel said so.
            let producer_outlived_everyone = order
                .iter()
                .position(|s| *s == Paced::ProducerEnds)
                .is_some_and(|end| {
                    [Paced::DropPublisher, Paced::Leave(A), Paced::Leave(C)]
                        .iter()
                        .all(|s| order.iter().position(|x| x == s).unwrap() < end)
                });
            assert_eq!(closed_seen, producer_outlived_everyone, "{what}: item 2");
            // A, if still subscribed, asks for the rest (a completed stream then completes).
            if probes[A].sub.lock().unwrap().is_some() {
                probes[A].request(UNBOUNDED);
            }
            for (i, probe) in probes.iter().enumerate() {
                let nexts = probe.nexts();
                // A gap-free run, in order, within what was sent.
                for w in nexts.windows(2) {
                    assert_eq!(w[1], w[0] + 1, "{what}: subscriber {i}: {nexts:?}");
                }
                assert!(nexts.last().is_none_or(|l| *l < next), "{what}: {i}");
                let events = probe.events();
                let terminal = events
                    .iter()
                    .filter(|e| !matches!(e, Ev::Next(_) | Ev::Sub));
                let terminal: Vec<_> = terminal.collect();
                let cancelled_first = cancelled_live[i];
                if cancelled_first {
                    assert!(terminal.is_empty(), "{what}: {i} cancelled: {terminal:?}");
                } else if complete {
                    assert_eq!(terminal, vec![&Ev::Complete], "{what}: {i}");
                    // Completion after everything sent from where it started (a late
                    // joiner may find nothing retained).
                    if let Some(last) = nexts.last() {
                        assert_eq!(*last + 1, next, "{what}: {i}");
                    }
                    if i == A && order[0] == Paced::Join(A) {
                        // A was there from the first element: it gets every one.
                        assert_eq!(nexts, (0..next).collect::<Vec<_>>(), "{what}: A");
                    }
                } else {
                    assert_eq!(terminal.len(), 1, "{what}: {i}: {events:?}");
                    let e = probe.last_error();
                    assert_eq!(
                        e.downcast_ref::<ProducerError>(),
                        Some(&ProducerError::Dropped),
                        "{what}: {i}: {e}"
                    );
                }
                if i == A {
                    let got = nexts.len() as u64;
                    assert!(got <= requested_a || complete, "{what}: A over its demand");
                    if !complete && !cancelled_first {
                        // Everything A asked for that was sent reached it before the end.
                        let sent_from_start = next - nexts.first().copied().unwrap_or(next);
                        assert_eq!(got, requested_a.min(sent_from_start), "{what}: A lost some");
                    }
                }
            }
        }
    }
    assert!(operations < 10_000, "bounded: {operations} operations");
}

// ----- the producer API: clones, the Sink --------------------------------------------------------

/// Clones send from several threads into one fanout while subscribers read at different
/// paces: each clone's elements arrive in its order, every subscriber gets every element,
/// and the buffer never holds more than its capacity.
#[test]
fn clones_send_from_many_threads_each_in_order_nothing_lost() {
    const PER: u64 = 3_000;
    let (tx, p) = fanout::channel::<u64>(8);
    let handles: Vec<_> = [
        RequestStrategy::Unbounded,
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(3),
    ]
    .into_iter()
    .map(|strategy| {
        let (s, h) = collect(strategy);
        p.subscribe(Box::new(s));
        h
    })
    .collect();
    let producers: Vec<_> = (0..3u64)
        .map(|t| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..PER {
                    tx.blocking_send(t * PER + i).unwrap();
                }
            })
        })
        .collect();
    for t in producers {
        t.join().unwrap();
    }
    tx.complete();
    for h in handles {
        let got = h.wait().unwrap();
        assert_eq!(got.len() as u64, 3 * PER);
        for t in 0..3 {
            let mine: Vec<u64> = got.iter().copied().filter(|x| x / PER == t).collect();
            assert_eq!(
                mine,
                (t * PER..(t + 1) * PER).collect::<Vec<_>>(),
                "clone {t} in order"
            );
        }
    }
    assert!(p.stats().buffered <= 8);
}

/// `complete` from one clone racing the others' sends: every send that returned `Ok` is
/// delivered before `on_complete`, the others are handed back; never accepted and dropped.
#[test]
fn complete_racing_sends_from_other_clones_loses_no_accepted_element() {
    for round in 0..50 {
        let (tx, p) = fanout::channel::<(u64, u64)>(2);
        let (s, h) = collect(RequestStrategy::Prefetch(2));
        p.subscribe(Box::new(s));
        let accepted = Arc::new(Mutex::new(Vec::new()));
        let senders: Vec<_> = (0..3)
            .map(|t| {
                let tx = tx.clone();
                let accepted = accepted.clone();
                std::thread::spawn(move || {
                    for i in 0..300 {
                        if tx.blocking_send((t, i)).is_err() {
                            return;
                        }
                        accepted.lock().unwrap().push((t, i));
                    }
                })
            })
            .collect();
        let ender = {
            let tx = tx.clone();
            std::thread::spawn(move || tx.complete())
        };
        drop(tx);
        for t in senders {
            t.join().unwrap();
        }
        ender.join().unwrap();
        let mut got = h.wait().unwrap();
        let mut accepted = accepted.lock().unwrap().clone();
        got.sort_unstable();
        accepted.sort_unstable();
        assert_eq!(got, accepted, "round {round}");
    }
}

/// The fanout sender as a `futures::Sink`: `send_all` waits through `poll_ready` while a
/// slow subscriber holds the buffer, and `close` completes the stream.
#[test]
fn the_sink_forwards_a_stream_and_close_completes() {
    use futures::SinkExt;
    let (mut tx, p) = fanout::channel::<u64>(4);
    let (fast, rf) = collect(RequestStrategy::Unbounded);
    let (slow, rs) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(fast));
    let slow_thread = std::thread::spawn(move || rs.wait());
    p.subscribe(Box::new(slow));
    let mut items = futures::stream::iter((0..500).map(Ok));
    futures::executor::block_on(async {
        tx.send_all(&mut items).await.unwrap();
        tx.close().await.unwrap();
    });
    assert!(tx.is_closed());
    assert_eq!(rf.wait().unwrap(), (0..500).collect::<Vec<_>>());
    assert_eq!(
        slow_thread.join().unwrap().unwrap(),
        (0..500).collect::<Vec<_>>()
    );
}

/// A `poll_ready` reservation holds one slot; dropped unused, it is given back, and a
/// sender waiting for the slot is woken.
#[test]
fn a_sink_reservation_holds_a_slot_and_is_given_back_unused() {
    use futures::Sink;
    let (tx, _p) = fanout::channel::<u64>(1);
    let mut sink = tx.clone();
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    assert!(matches!(
        std::pin::Pin::new(&mut sink).poll_ready(&mut cx),
        Poll::Ready(Ok(()))
    ));
    assert!(
        tx.try_send(1).unwrap_err().is_full(),
        "the reservation holds the slot"
    );
    let mut waiting = std::pin::pin!(tx.send(1));
    assert!(waiting.as_mut().poll(&mut cx).is_pending());
    drop(sink);
    assert_eq!(
        counter.0.load(Ordering::SeqCst),
        1,
        "the waiting send was woken"
    );
    assert!(matches!(
        waiting.as_mut().poll(&mut cx),
        Poll::Ready(Ok(()))
    ));
}

// ----- subscribers on islands (issue 24: the broadcast channel's receivers on threads) ------

/// `k` islands, each `Flow::from_shared_publisher(fanout, ring)` into a collecting subscriber
/// with `strategy`; the calling thread sends `0..n` (per element, or as one burst), then
/// completes. Returns what each island's subscriber got.
fn islands_get(
    k: usize,
    ring: usize,
    n: u64,
    burst: bool,
    strategy: RequestStrategy,
) -> Vec<Vec<u64>> {
    use rs_impl::flow::{Flow, SharedPublisher};
    use rs_impl::island::Runtime;
    let runtime = Runtime::with_threads(2).expect("thread pool");
    let (tx, p) = fanout::channel::<u64>(16);
    let shared: SharedPublisher<u64> = Arc::new(p.clone());
    let handles: Vec<_> = (0..k)
        .map(|_| {
            let (s, h) = collect(strategy);
            Flow::from_shared_publisher(shared.clone(), ring)
                .into_publisher(&runtime)
                .subscribe(Box::new(s));
            h
        })
        .collect();
    while p.stats().subscribers < k {
        std::thread::yield_now();
    }
    if burst {
        tx.blocking_send_all(0..n).expect("nobody leaves");
    } else {
        for x in 0..n {
            tx.blocking_send(x).expect("nobody leaves");
        }
    }
    tx.complete();
    handles
        .into_iter()
        .map(|h| h.wait().expect("completes"))
        .collect()
}

/// Every island gets every element once, in order, then completes, whether the fanout hands
/// its input side runs (a burst; lagging islands' visits, drained by the producer or by a
/// requesting island) or single elements, with rings small enough that the islands run out
/// of input and of demand, park and are woken throughout.
#[test]
fn islands_get_every_element_in_order_per_element_and_in_bursts() {
    let expected: Vec<u64> = (0..20_000).collect();
    for &(k, ring) in &[(1, 8), (3, 8), (3, 64), (8, 16)] {
        for burst in [false, true] {
            for strategy in [RequestStrategy::Unbounded, RequestStrategy::Prefetch(3)] {
                let got = islands_get(k, ring, 20_000, burst, strategy);
                assert_eq!(got.len(), k);
                for g in got {
                    assert!(
                        g == expected,
                        "k {k}, ring {ring}, burst {burst}, {strategy:?}: {} elements, first \
                         difference at {:?}",
                        g.len(),
                        g.iter().zip(&expected).position(|(a, b)| a != b)
                    );
                }
            }
        }
    }
}
