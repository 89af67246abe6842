//! A probe subscriber that records what a publisher does to it, for the source models.
//!
//! The probe never panics inside a signal (the sources catch subscriber panics, rule 2.13, and
//! would swallow the assertion): it records violations, and [`Record::finish`] asserts at the
//! end of each execution.

use std::sync::{Arc as StdArc, Weak};

use rs_api::{Error, Subscriber, SubscriptionRef};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use rs_impl::loom::sync::{Arc, Condvar, Mutex};

/// What the probe does by itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Behaviour {
    /// Requested from inside `on_subscribe` (3.2).
    pub(crate) initial: u64,
    /// `Some((item, n))`: request `n` re-entrantly from inside `on_next(item)` (3.2, 3.3).
    pub(crate) reentrant: Option<(u64, u64)>,
}

/// What the probe saw, shared with the model's threads.
pub(crate) struct Record {
    /// Set while a signal runs. Relaxed read-modify-writes on purpose: they see every overlap
    /// (an RMW reads the latest value) without adding happens-before edges of their own, which
    /// would hide a publisher that forgets them.
    in_signal: AtomicBool,
    /// Elements received, updated with a Relaxed load and a separate store: if the publisher
    /// moves signalling to another thread without a happens-before edge, loom lets the load
    /// read a stale count, which shows as an out-of-order element.
    received: AtomicU64,
    completes: AtomicUsize,
    errors: AtomicUsize,
    /// The text of the last error received.
    last_error: Mutex<Option<String>>,
    violations: Mutex<Vec<String>>,
    /// The subscription, for the model's other threads.
    subscription: Mutex<Option<SubscriptionRef>>,
    /// Notified when `subscription` is set (a blocking wait, which loom models exactly,
    /// rather than a spin loop, which blows up its search).
    subscribed: Condvar,
}

/// The totals at the end of an execution.
#[derive(Debug)]
pub(crate) struct Summary {
    pub(crate) received: u64,
    pub(crate) completes: usize,
    pub(crate) errors: usize,
    pub(crate) last_error: Option<String>,
}

impl Record {
    pub(crate) fn new() -> Arc<Record> {
        Arc::new(Record {
            in_signal: AtomicBool::new(false),
            received: AtomicU64::new(0),
            completes: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            last_error: Mutex::new(None),
            violations: Mutex::new(Vec::new()),
            subscription: Mutex::new(None),
            subscribed: Condvar::new(),
        })
    }

    fn violation(&self, what: String) {
        self.violations.lock().push(what);
    }

    /// Waits until `on_subscribe` has published the subscription.
    pub(crate) fn wait_subscription(&self) -> SubscriptionRef {
        let mut slot = self.subscription.lock();
        loop {
            if let Some(s) = slot.clone() {
                return s;
            }
            slot = self.subscribed.wait(slot);
        }
    }

    pub(crate) fn received(&self) -> u64 {
        self.received.load(Ordering::Acquire)
    }

    /// Asserts that no rule was broken while signalling, releases the subscription (so the
    /// probe's loom objects are not reported as leaked) and returns the totals.
    pub(crate) fn finish(&self) -> Summary {
        self.subscription.lock().take();
        let violations = std::mem::take(&mut *self.violations.lock());
        assert!(violations.is_empty(), "{}", violations.join("; "));
        let summary = Summary {
            received: self.received.load(Ordering::Acquire),
            completes: self.completes.load(Ordering::Acquire),
            errors: self.errors.load(Ordering::Acquire),
            last_error: self.last_error.lock().clone(),
        };
        assert!(
            summary.completes + summary.errors <= 1,
            "rule 1.7: {} terminal signals",
            summary.completes + summary.errors
        );
        summary
    }
}

/// The probe subscriber. It holds a std `Arc` token whose `Weak` the model keeps: loom has no
/// `Weak`, and the token makes "the publisher dropped the subscriber" (3.13) a deterministic
/// check at the end of each execution.
pub(crate) struct Probe {
    record: Arc<Record>,
    behaviour: Behaviour,
    subscription: Option<SubscriptionRef>,
    subscribed: bool,
    terminated: bool,
    _token: StdArc<()>,
}

impl Probe {
    pub(crate) fn new(record: &Arc<Record>, behaviour: Behaviour) -> (Probe, Weak<()>) {
        let token = StdArc::new(());
        let weak = StdArc::downgrade(&token);
        let probe = Probe {
            record: record.clone(),
            behaviour,
            subscription: None,
            subscribed: false,
            terminated: false,
            _token: token,
        };
        (probe, weak)
    }

    fn enter(&self, signal: &str) {
        if self.record.in_signal.swap(true, Ordering::Relaxed) {
            self.record
                .violation(format!("rule 1.3: {signal} overlaps another signal"));
        }
        if self.terminated {
            self.record
                .violation(format!("rule 1.7: {signal} after the terminal signal"));
        }
    }

    fn exit(&self) {
        self.record.in_signal.store(false, Ordering::Relaxed);
    }
}

impl Subscriber<u64> for Probe {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.enter("on_subscribe");
        if self.subscribed {
            self.record
                .violation("rule 1.9/2.12: on_subscribe twice".to_owned());
        }
        self.subscribed = true;
        *self.record.subscription.lock() = Some(subscription.clone());
        self.record.subscribed.notify_all();
        if self.behaviour.initial > 0 {
            subscription.request(self.behaviour.initial);
        }
        self.subscription = Some(subscription);
        self.exit();
    }

    fn on_next(&mut self, item: u64) {
        self.enter("on_next");
        if !self.subscribed {
            self.record
                .violation("rule 1.9: on_next before on_subscribe".to_owned());
        }
        let n = self.record.received.load(Ordering::Relaxed);
        if item != n {
            self.record.violation(format!(
                "rule 1.3: element {item} arrived as element #{n} (a signal without happens-before, or a duplicate)"
            ));
        }
        self.record.received.store(n + 1, Ordering::Relaxed);
        if let Some((at, k)) = self.behaviour.reentrant {
            if item == at {
                if let Some(s) = &self.subscription {
                    s.request(k);
                }
            }
        }
        self.exit();
    }

    fn on_error(&mut self, error: Error) {
        self.enter("on_error");
        self.terminated = true;
        self.subscription = None; // 2.3, 2.4: dropped without being called
        self.record.errors.fetch_add(1, Ordering::AcqRel);
        *self.record.last_error.lock() = Some(error.to_string());
        self.exit();
    }

    fn on_complete(&mut self) {
        self.enter("on_complete");
        self.terminated = true;
        self.subscription = None;
        self.record.completes.fetch_add(1, Ordering::AcqRel);
        self.exit();
    }
}
