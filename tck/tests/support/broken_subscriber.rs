//! A configurable test subscriber: correct with `SubKnobs::default()`, broken in exactly the
//! ways its knobs say. Elements are `u64`s.
//!
//! With a probe it is a whitebox subscriber: it requests only when its puppet says so, and
//! reports every signal. Without one it is a blackbox subscriber: it requests 1 in
//! `on_subscribe` and 1 after each element (and once more when nudged by `trigger_request`).

use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rs_api::{Error, Subscriber, SubscriptionRef};
use rs_tck::subscriber::{
    SubscriberBlackboxVerification, SubscriberPuppet, SubscriberWhiteboxVerification,
    WhiteboxSubscriberProbe,
};

/// What to break. Every knob off: a correct subscriber.
#[derive(Debug, Clone, Default)]
pub(crate) struct SubKnobs {
    /// Setup: never register with the probe.
    pub(crate) no_register: bool,
    /// 2.1: never request.
    pub(crate) no_request: bool,
    /// 2.1/3.9: every request is `request(0)`.
    pub(crate) request_zero: bool,
    /// 2.3: `request(1)` from inside `on_complete`.
    pub(crate) request_in_on_complete: bool,
    /// 2.3: `cancel()` from inside `on_error`.
    pub(crate) cancel_in_on_error: bool,
    /// 2.4: keep using the subscription after a terminal signal (the puppet and the nudge
    /// still request).
    pub(crate) keep_subscription_after_terminal: bool,
    /// 2.5: neither cancel nor use a second subscription.
    pub(crate) ignore_second_subscription: bool,
    /// 2.5: request from a second subscription (and cancel it).
    pub(crate) request_second_subscription: bool,
    /// 2.6: `signal_cancel` cancels only at the next `on_next`.
    pub(crate) lazy_cancel: bool,
    /// 2.7: calls on the subscription are not serialised (the puppet calls straight through;
    /// without a probe, a helper thread requests alongside `on_next`).
    pub(crate) unserialized: bool,
    /// 2.7: replenishes with `request(1)` from inside `on_next` (whitebox too), without
    /// serialising that call with the puppet's (the puppet's own calls stay serial).
    pub(crate) replenish_unserialized: bool,
    /// Not a fault: a whitebox subscriber that requests by itself (4 in `on_subscribe`, 1 after
    /// each element, serialised with its cancel) and whose puppet's `trigger_request` does
    /// nothing, as `ProbeReporting`'s docs recommend for such subscribers.
    pub(crate) self_requesting: bool,
    /// 2.8: `on_next` after cancel panics.
    pub(crate) panic_on_next_after_cancel: bool,
    /// 2.9: `on_complete` panics.
    pub(crate) panic_on_complete: bool,
    /// 2.10: `on_error` panics.
    pub(crate) panic_on_error: bool,
    /// 2.13: `on_next` panics.
    pub(crate) panic_on_next: bool,
    /// 3.1: when dropped, a thread it leaves behind keeps requesting.
    pub(crate) requests_after_drop: bool,
    /// 3.8: `trigger_request(n)` requests only `n - 1`.
    pub(crate) short_request: bool,
    /// 3.10/3.11: `request` is called while holding the state that the signals need (they
    /// panic when they find it held): the puppet does so; without a probe, a helper thread.
    pub(crate) lock_across_request: bool,
    /// 3.14: dropping it without a terminal signal panics.
    pub(crate) panic_on_drop_without_terminal: bool,
}

#[derive(Default)]
struct State {
    subscription: Option<SubscriptionRef>,
    terminated: bool,
    cancelled: bool,
    cancel_pending: bool,
    /// A handle kept past the end (the `requests_after_drop` knob).
    leaked: Option<SubscriptionRef>,
}

struct Shared {
    knobs: SubKnobs,
    state: Mutex<State>,
    /// Serialises the subscriber's own calls on the subscription (2.7).
    calls: Mutex<()>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state, for a signal; with `lock_across_request`, a held state means a signal
    /// re-entered from inside a request the puppet made while holding it.
    fn signal_lock(&self, signal: &str) -> MutexGuard<'_, State> {
        if self.knobs.lock_across_request {
            match self.state.try_lock() {
                Ok(g) => return g,
                Err(_) => {
                    panic!("{signal} re-entered while the state is held across request (test knob)")
                }
            }
        }
        self.lock()
    }

    fn amount(&self, n: u64) -> u64 {
        if self.knobs.request_zero {
            0
        } else {
            n
        }
    }

    fn call(&self, f: impl FnOnce()) {
        if self.knobs.unserialized {
            f();
        } else {
            let _g = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            f();
        }
    }
}

/// The subscriber.
pub(crate) struct TestSubscriber {
    shared: Arc<Shared>,
    probe: Option<WhiteboxSubscriberProbe<u64>>,
}

impl TestSubscriber {
    pub(crate) fn new(knobs: SubKnobs, probe: Option<WhiteboxSubscriberProbe<u64>>) -> Self {
        TestSubscriber {
            shared: Arc::new(Shared {
                knobs,
                state: Mutex::new(State::default()),
                calls: Mutex::new(()),
            }),
            probe,
        }
    }

    /// The blackbox `trigger_request` hook: one more request.
    pub(crate) fn nudge(&self) {
        let sh = &self.shared;
        let s = {
            let st = sh.lock();
            if (st.terminated && !sh.knobs.keep_subscription_after_terminal) || st.cancelled {
                return;
            }
            st.subscription.clone()
        };
        if let (Some(s), false) = (s, sh.knobs.no_request || sh.knobs.lock_across_request) {
            sh.call(|| s.request(sh.amount(1)));
        }
    }
}

struct Puppet(Arc<Shared>);

impl SubscriberPuppet for Puppet {
    fn trigger_request(&self, elements: u64) {
        let sh = &self.0;
        let k = &sh.knobs;
        if k.no_request || k.self_requesting {
            return;
        }
        let n = if k.short_request && elements > 1 {
            elements - 1
        } else {
            elements
        };
        if k.lock_across_request {
            let st = sh.lock();
            if let Some(s) = st.subscription.clone() {
                s.request(sh.amount(n)); // a synchronous on_next re-enters: it panics
            }
            drop(st);
            return;
        }
        let s = {
            let st = sh.lock();
            if (st.terminated && !k.keep_subscription_after_terminal) || st.cancelled {
                return;
            }
            st.subscription.clone()
        };
        if let Some(s) = s {
            sh.call(|| s.request(sh.amount(n)));
        }
    }

    fn signal_cancel(&self) {
        let sh = &self.0;
        let s = {
            let mut st = sh.lock();
            if st.cancelled || st.terminated {
                return;
            }
            st.cancelled = true;
            if sh.knobs.lazy_cancel {
                st.cancel_pending = true;
                return;
            }
            st.subscription.clone()
        };
        if let Some(s) = s {
            sh.call(|| s.cancel());
        }
    }
}

impl Subscriber<u64> for TestSubscriber {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let sh = self.shared.clone();
        let k = &sh.knobs;
        {
            let mut st = sh.signal_lock("on_subscribe");
            if st.subscription.is_some() || st.terminated {
                drop(st);
                if k.request_second_subscription {
                    subscription.request(1);
                }
                if !k.ignore_second_subscription {
                    subscription.cancel();
                }
                return;
            }
            st.subscription = Some(subscription.clone());
            if k.requests_after_drop {
                st.leaked = Some(subscription.clone());
            }
        }
        match &self.probe {
            Some(probe) => {
                if !k.no_register {
                    probe.register_on_subscribe(Puppet(sh.clone()));
                }
                if k.self_requesting {
                    sh.call(|| subscription.request(4));
                }
            }
            None => {
                if k.lock_across_request {
                    // A helper thread requests while holding the state.
                    let sh2 = sh.clone();
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(10));
                        let st = sh2.lock();
                        if let Some(s) = st.subscription.clone() {
                            s.request(8);
                        }
                        drop(st);
                    });
                } else if !k.no_request {
                    sh.call(|| subscription.request(sh.amount(1)));
                }
                if k.unserialized {
                    // A helper thread requests alongside on_next.
                    let s = subscription.clone();
                    std::thread::spawn(move || {
                        for _ in 0..40 {
                            s.request(1);
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    });
                }
            }
        }
    }

    fn on_next(&mut self, item: u64) {
        let sh = self.shared.clone();
        let k = &sh.knobs;
        let (s, cancelled, pending) = {
            let mut st = sh.signal_lock("on_next");
            let pending = std::mem::take(&mut st.cancel_pending);
            (st.subscription.clone(), st.cancelled, pending)
        };
        if pending {
            if let Some(s) = &s {
                s.cancel();
            }
        }
        if k.panic_on_next {
            panic!("on_next panicked (test knob)");
        }
        if cancelled && k.panic_on_next_after_cancel {
            panic!("on_next after cancel panicked (test knob)");
        }
        if let Some(p) = &self.probe {
            p.register_on_next(item);
            if let (Some(s), false) = (&s, cancelled) {
                if k.replenish_unserialized {
                    s.request(1);
                } else if k.self_requesting {
                    sh.call(|| s.request(1));
                }
            }
        } else if let (Some(s), false, false) =
            (s, cancelled, k.no_request || k.lock_across_request)
        {
            sh.call(|| s.request(sh.amount(1)));
        }
    }

    fn on_error(&mut self, error: Error) {
        let sh = self.shared.clone();
        let k = &sh.knobs;
        let s = {
            let mut st = sh.signal_lock("on_error");
            st.terminated = true;
            if k.keep_subscription_after_terminal {
                st.subscription.clone()
            } else {
                st.subscription.take()
            }
        };
        if let (Some(s), true) = (s, k.cancel_in_on_error) {
            s.cancel();
        }
        if k.panic_on_error {
            panic!("on_error panicked (test knob)");
        }
        if let Some(p) = &self.probe {
            p.register_on_error(error);
        }
    }

    fn on_complete(&mut self) {
        let sh = self.shared.clone();
        let k = &sh.knobs;
        let s = {
            let mut st = sh.signal_lock("on_complete");
            st.terminated = true;
            if k.keep_subscription_after_terminal {
                st.subscription.clone()
            } else {
                st.subscription.take()
            }
        };
        if let (Some(s), true) = (s, k.request_in_on_complete) {
            s.request(1);
        }
        if k.panic_on_complete {
            panic!("on_complete panicked (test knob)");
        }
        if let Some(p) = &self.probe {
            p.register_on_complete();
        }
    }
}

impl Drop for TestSubscriber {
    fn drop(&mut self) {
        let sh = &self.shared;
        // try_lock: a signal that panicked may have been called while the state was held.
        let (terminated, s) = match sh.state.try_lock() {
            Ok(st) => (st.terminated, st.leaked.clone()),
            Err(_) => (false, None),
        };
        if sh.knobs.requests_after_drop {
            if let Some(s) = s {
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        std::thread::sleep(Duration::from_millis(5));
                        s.request(1);
                    }
                });
            }
        }
        if sh.knobs.panic_on_drop_without_terminal && !terminated && !std::thread::panicking() {
            panic!("dropped without a terminal signal (test knob)");
        }
    }
}

/// A whitebox and blackbox verification over [`TestSubscriber`].
#[derive(Debug, Clone, Default)]
pub(crate) struct BrokenSubscriber {
    pub(crate) knobs: SubKnobs,
}

impl SubscriberWhiteboxVerification for BrokenSubscriber {
    type Item = u64;

    fn create_subscriber(
        &self,
        probe: WhiteboxSubscriberProbe<u64>,
    ) -> impl Subscriber<u64> + 'static {
        TestSubscriber::new(self.knobs.clone(), Some(probe))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

impl SubscriberBlackboxVerification for BrokenSubscriber {
    type Item = u64;
    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        TestSubscriber::new(self.knobs.clone(), None)
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn trigger_request(&self, subscriber: &mut dyn Any) {
        subscriber
            .downcast_mut::<TestSubscriber>()
            .expect("the subscriber create_subscriber made")
            .nudge();
    }
}
