//! `Repeat`: the `rs_impl::serial` module's complete example (its docs include this file), a
//! publisher driven from the caller's thread through the drain loop. The TCK verifies it (the
//! publisher verification, and every loom scenario in the loom build): it is registered with
//! the runner in `tck/src/bin/rs-tck/registry/examples.rs`, which includes this file.

// The handle handed to `on_subscribe` is an `rs_api::SubscriptionRef`: a std `Arc` in every
// build (loom's `Arc` cannot become a `dyn` std `Arc`). Everything inside it comes from the
// facade, so that loom sees every synchronisation.
use std::sync::Arc;

use rs_api::{
    BoxSubscriber, Error, Publisher, PublisherExt, SpecViolation, Subscriber, Subscription,
    SubscriptionRef,
};
use rs_impl::demand::Demand;
use rs_impl::loom::sync::atomic::{AtomicBool, Ordering};
use rs_impl::panics::guard;
use rs_impl::serial::DrainLoop;

/// Publishes `value`, `count` times.
pub(crate) struct Repeat {
    pub(crate) value: u32,
    pub(crate) count: u64,
}

struct State {
    subscriber: Option<BoxSubscriber<u32>>, // None once terminated or cancelled (3.13)
    emitted: u64,
}

struct RepeatSubscription {
    value: u32,
    count: u64,
    demand: Demand,
    cancelled: AtomicBool,
    bad_request: AtomicBool,
    drain: DrainLoop<State>,
}

impl RepeatSubscription {
    /// The one pass. `first` is the handle to give `on_subscribe`; only `subscribe` passes
    /// it, and its call is always the first drainer (nobody else has the handle yet).
    fn run(&self, mut first: Option<SubscriptionRef>) {
        self.drain.drain(|st| {
            let Some(s) = st.subscriber.as_mut() else {
                return;
            };
            if let Some(handle) = first.take() {
                // 1.9: first; may request re-entrantly (3.2). 2.13: a subscriber that panics
                // here is cancelled, and the panic does not escape into `subscribe`.
                if guard("on_subscribe", || s.on_subscribe(handle)).is_err() {
                    st.subscriber = None;
                    return;
                }
            }
            loop {
                if self.cancelled.load(Ordering::Acquire) {
                    st.subscriber = None; // 3.13: drop the subscriber
                    return;
                }
                let s = st.subscriber.as_mut().unwrap();
                if self.bad_request.load(Ordering::Acquire) {
                    let _ = guard("on_error", || {
                        s.on_error(SpecViolation::NonPositiveRequest.into())
                    }); // 3.9
                    st.subscriber = None;
                    return;
                }
                if st.emitted == self.count {
                    let _ = guard("on_complete", || s.on_complete()); // 1.5 (2.13: contained)
                    st.subscriber = None; // 1.6
                    return;
                }
                if self.demand.outstanding(st.emitted) == 0 {
                    return; // 1.1: wait; the next request drains again
                }
                st.emitted += 1;
                // 2.13: a panicking subscriber is a cancelled subscriber.
                if guard("on_next", || s.on_next(self.value)).is_err() {
                    self.cancelled.store(true, Ordering::Release);
                }
            }
        });
    }
}

impl Subscription for RepeatSubscription {
    fn request(&self, n: u64) {
        if self.demand.request(n).is_err() {
            self.bad_request.store(true, Ordering::Release);
        }
        self.run(None); // from inside on_next this only bumps the counter (3.3)
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.run(None);
    }
}

impl Publisher<u32> for Repeat {
    fn subscribe(&self, subscriber: BoxSubscriber<u32>) {
        let sub = Arc::new(RepeatSubscription {
            value: self.value,
            count: self.count,
            demand: Demand::new(),
            cancelled: AtomicBool::new(false),
            bad_request: AtomicBool::new(false),
            drain: DrainLoop::new(State {
                subscriber: Some(subscriber),
                emitted: 0,
            }),
        });
        sub.run(Some(sub.clone()));
    }
}

// A subscriber that requests one element at a time, re-entrantly from on_next.
struct OneByOne {
    sub: Option<SubscriptionRef>,
    got: Vec<u32>,
    done: std::sync::mpsc::Sender<Vec<u32>>,
}

impl Subscriber<u32> for OneByOne {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(1);
        self.sub = Some(s);
    }
    fn on_next(&mut self, x: u32) {
        self.got.push(x);
        self.sub.as_ref().unwrap().request(1);
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}")
    }
    fn on_complete(&mut self) {
        self.sub = None;
        let _ = self.done.send(std::mem::take(&mut self.got));
    }
}

#[allow(dead_code)] // the TCK's registry includes this file for `Repeat` alone
fn main() {
    let (done, got) = std::sync::mpsc::channel();
    Repeat { value: 7, count: 5 }.subscribe_with(OneByOne {
        sub: None,
        got: Vec::new(),
        done,
    });
    assert_eq!(got.recv().unwrap(), vec![7; 5]);
}
