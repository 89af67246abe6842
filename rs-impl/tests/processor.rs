//! Behaviour of the reference identity processor: multicast, coordinated emission, bounded
//! buffer, error forwarding (4.2), per-subscriber failures (3.9, 2.13), upstream cancel.
#![cfg(not(rs_loom))]
// Test probes use std atomics and locks directly; the facade ban targets rs-impl's sources.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rs_api::{BoxSubscriber, SubscriptionRef};
use rs_api::{Error, Publisher, PublisherExt, SpecViolation, Subscriber};
use rs_impl::processor::IdentityProcessor;
use rs_impl::source;
use rs_impl::subscriber::{collect, RequestStrategy};
use support::Manual;

fn manual_upstream(p: &IdentityProcessor<u32>) -> (Arc<Manual>, IdentityProcessor<u32>) {
    let m = Arc::new(Manual::default());
    let mut up = p.clone();
    up.on_subscribe(m.clone());
    (m, up)
}

#[test]
fn prefetches_exactly_the_buffer_and_replenishes_by_half() {
    let p = IdentityProcessor::<u32>::new(8);
    let (m, mut up) = manual_upstream(&p);
    assert_eq!(m.requested.load(Ordering::SeqCst), 8);
    // No subscriber: the buffer fills, nothing more is requested.
    for i in 0..8 {
        up.on_next(i);
    }
    assert_eq!(m.requested.load(Ordering::SeqCst), 8);
    let (s, r) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    // 8 delivered: replenished in batches of 4.
    assert_eq!(m.requested.load(Ordering::SeqCst), 16);
    up.on_complete();
    assert_eq!(r.wait().unwrap(), (0..8).collect::<Vec<_>>());
}

#[test]
fn upstream_error_reaches_a_subscriber_without_demand_at_once() {
    let p = IdentityProcessor::<u32>::new(4);
    let (_m, mut up) = manual_upstream(&p);
    let (s, r) = collect::<u32>(RequestStrategy::Prefetch(1));
    // A subscriber that never requests: wrap collect so it does not request.
    struct NoDemand(BoxSubscriber<u32>, Arc<Mutex<Vec<&'static str>>>);
    impl Subscriber<u32> for NoDemand {
        fn on_subscribe(&mut self, _s: SubscriptionRef) {
            self.1.lock().unwrap().push("subscribe");
        }
        fn on_next(&mut self, _: u32) {
            self.1.lock().unwrap().push("next");
        }
        fn on_error(&mut self, e: Error) {
            self.1.lock().unwrap().push("error");
            self.0.on_error(e);
        }
        fn on_complete(&mut self) {
            self.1.lock().unwrap().push("complete");
        }
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    p.subscribe(Box::new(NoDemand(Box::new(s), log.clone())));
    up.on_next(1);
    up.on_error(Error::msg("upstream failed"));
    assert_eq!(*log.lock().unwrap(), vec!["subscribe", "error"]);
    assert_eq!(r.wait().unwrap_err().to_string(), "upstream failed");
}

#[test]
fn every_subscriber_gets_the_same_error_instance() {
    let p = IdentityProcessor::<u32>::new(4);
    let (a, ra) = collect::<u32>(RequestStrategy::Unbounded);
    let (b, rb) = collect::<u32>(RequestStrategy::OneByOne);
    p.subscribe(Box::new(a));
    p.subscribe(Box::new(b));
    let e = Error::msg("boom");
    source::failed::<u32>(e.clone()).subscribe_with(p.clone());
    assert!(ra.wait().unwrap_err().ptr_eq(&e));
    assert!(rb.wait().unwrap_err().ptr_eq(&e));
}

#[test]
fn late_subscriber_after_completion_is_completed_at_once() {
    let p = IdentityProcessor::<u32>::new(4);
    let (a, ra) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(a));
    source::range(0u32..3).subscribe_with(p.clone());
    assert_eq!(ra.wait().unwrap(), vec![0, 1, 2]);
    let (b, rb) = collect::<u32>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(b));
    assert_eq!(rb.wait().unwrap(), Vec::<u32>::new());
}

#[test]
fn request_zero_fails_only_that_subscriber() {
    let p = IdentityProcessor::<u32>::new(4);
    struct Zero(Arc<Mutex<Option<Error>>>);
    impl Subscriber<u32> for Zero {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(0);
        }
        fn on_next(&mut self, _: u32) {
            panic!("no element may arrive after request(0)");
        }
        fn on_error(&mut self, e: Error) {
            *self.0.lock().unwrap() = Some(e);
        }
        fn on_complete(&mut self) {}
    }
    // `b` joins first: were `Zero` the only subscriber, its leaving would shut the
    // processor down (the last subscriber leaving cancels upstream, rule 3.14).
    let (b, rb) = collect(RequestStrategy::Prefetch(2));
    p.subscribe(Box::new(b));
    let got = Arc::new(Mutex::new(None));
    p.subscribe(Box::new(Zero(got.clone())));
    source::range(0u32..5).subscribe_with(p.clone());
    assert_eq!(rb.wait().unwrap(), vec![0, 1, 2, 3, 4]);
    let e = got.lock().unwrap().clone().expect("3.9 error delivered");
    assert_eq!(e.spec_violation(), Some(&SpecViolation::NonPositiveRequest));
}

#[test]
fn a_panicking_subscriber_is_cancelled_and_the_others_keep_every_element() {
    let p = IdentityProcessor::<u32>::new(2);
    struct Bomb(Arc<AtomicBool>);
    impl Subscriber<u32> for Bomb {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(rs_api::UNBOUNDED);
        }
        fn on_next(&mut self, x: u32) {
            if x == 1 {
                panic!("subscriber bug (expected by this test)");
            }
        }
        fn on_error(&mut self, _: Error) {}
        fn on_complete(&mut self) {}
    }
    impl Drop for Bomb {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    p.subscribe(Box::new(Bomb(dropped.clone())));
    let (b, rb) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(b));
    source::range(0u32..6).subscribe_with(p.clone());
    assert_eq!(rb.wait().unwrap(), (0..6).collect::<Vec<_>>());
    assert!(
        dropped.load(Ordering::SeqCst),
        "the panicking subscriber was dropped"
    );
}

#[test]
fn last_subscriber_cancelling_cancels_upstream_and_later_subscribers_are_refused() {
    let p = IdentityProcessor::<u32>::new(4);
    let (m, _up) = manual_upstream(&p);
    let (a, ra) = collect::<u32>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(a));
    ra.cancel();
    assert!(m.cancelled.load(Ordering::SeqCst));
    assert!(ra.wait().is_err());
    let (b, rb) = collect::<u32>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(b));
    let e = rb.wait().unwrap_err();
    assert_eq!(e.spec_violation().map(SpecViolation::rule), Some("1.9"));
}

#[test]
fn a_second_upstream_is_cancelled() {
    let p = IdentityProcessor::<u32>::new(4);
    let (first, _up) = manual_upstream(&p);
    let (second, _up2) = manual_upstream(&p);
    assert!(!first.cancelled.load(Ordering::SeqCst));
    assert!(second.cancelled.load(Ordering::SeqCst));
    assert_eq!(second.requested.load(Ordering::SeqCst), 0);
}

#[test]
fn coordinated_emission_waits_for_the_slowest_subscriber() {
    let p = IdentityProcessor::<u32>::new(16);
    let (m, mut up) = manual_upstream(&p);
    struct Hold(Arc<Mutex<Option<SubscriptionRef>>>, Arc<AtomicU64>);
    impl Subscriber<u32> for Hold {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            *self.0.lock().unwrap() = Some(s);
        }
        fn on_next(&mut self, _: u32) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
        fn on_error(&mut self, _: Error) {}
        fn on_complete(&mut self) {}
    }
    let slow_sub = Arc::new(Mutex::new(None));
    let slow_count = Arc::new(AtomicU64::new(0));
    p.subscribe(Box::new(Hold(slow_sub.clone(), slow_count.clone())));
    let (fast, rfast) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(fast));
    for i in 0..4 {
        up.on_next(i);
    }
    assert_eq!(slow_count.load(Ordering::SeqCst), 0);
    let s = slow_sub.lock().unwrap().clone().unwrap();
    s.request(3);
    assert_eq!(slow_count.load(Ordering::SeqCst), 3);
    s.request(1);
    up.on_complete();
    assert_eq!(rfast.wait().unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(slow_count.load(Ordering::SeqCst), 4);
    assert_eq!(m.requested.load(Ordering::SeqCst), 16);
}

#[test]
fn many_subscribers_leaving_at_once_get_nothing_more_and_the_others_keep_every_element() {
    /// Records what it gets; cancels from inside `on_next(cancel_at)` when given one.
    struct Quitter {
        sub: Option<SubscriptionRef>,
        cancel_at: Option<u32>,
        got: Arc<Mutex<Vec<u32>>>,
        _alive: Arc<()>,
    }
    impl Subscriber<u32> for Quitter {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(rs_api::UNBOUNDED);
            self.sub = Some(s);
        }
        fn on_next(&mut self, x: u32) {
            self.got.lock().unwrap().push(x);
            if Some(x) == self.cancel_at {
                self.sub.take().unwrap().cancel();
            }
        }
        fn on_error(&mut self, e: Error) {
            panic!("{e}");
        }
        fn on_complete(&mut self) {}
    }
    let p = IdentityProcessor::<u32>::new(16);
    let mut subscribers = Vec::new();
    for i in 0..32u32 {
        // Every odd subscriber leaves, after element 0, 1, 2 or 3; several at the same element.
        let cancel_at = (i % 2 == 1).then_some(i % 4 / 2 + (i % 8) / 4 * 2);
        let got = Arc::new(Mutex::new(Vec::new()));
        let alive = Arc::new(());
        p.subscribe(Box::new(Quitter {
            sub: None,
            cancel_at,
            got: got.clone(),
            _alive: alive.clone(),
        }));
        subscribers.push((cancel_at, got, Arc::downgrade(&alive)));
    }
    source::range(0u32..40).subscribe_with(p.clone());
    for (i, (cancel_at, got, alive)) in subscribers.iter().enumerate() {
        let got = got.lock().unwrap().clone();
        match cancel_at {
            Some(c) => {
                assert_eq!(got, (0..=*c).collect::<Vec<_>>(), "subscriber {i}");
                assert!(alive.upgrade().is_none(), "subscriber {i} dropped (3.13)");
            }
            None => assert_eq!(got, (0..40).collect::<Vec<_>>(), "subscriber {i}"),
        }
    }
}

/// The size rule: a buffer of 0 cannot hold the element in flight, so the constructor panics
/// (it used to round 0 up to 1 silently).
#[test]
#[should_panic(expected = "at least one element")]
fn a_buffer_of_zero_panics() {
    let _ = IdentityProcessor::<u32>::new(0);
}
