//! What the loom scenarios observe: the probe subscriber, its shared record, and a subscription
//! that records what a subscriber does with it. All built on [`rs_impl::loom`] types, so that
//! loom sees every synchronisation.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc as StdArc;

use rs_api::{Error, Subscriber, Subscription, SubscriptionRef};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use rs_impl::loom::sync::{Arc, Condvar, Mutex};
use rs_impl::loom::thread;

/// A subscription that records what its subscriber did with it.
#[derive(Debug, Default)]
pub(super) struct Recording {
    requested: AtomicBool,
    cancelled: AtomicBool,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct RecordingState {
    pub(super) requested: bool,
    pub(super) cancelled: bool,
}

impl Recording {
    pub(super) fn state(&self) -> RecordingState {
        RecordingState {
            requested: self.requested.load(Ordering::Acquire),
            cancelled: self.cancelled.load(Ordering::Acquire),
        }
    }
}

impl Subscription for Recording {
    fn request(&self, _n: u64) {
        self.requested.store(true, Ordering::Release);
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// Spawns a thread that waits for the subscription and requests `n`.
pub(super) fn spawn_request(record: &Arc<Record>, n: u64) -> thread::JoinHandle<()> {
    let record = record.clone();
    thread::spawn(move || record.wait_subscription().request(n))
}

/// What the probe saw, shared with the scenario's threads.
pub(super) struct Record {
    /// Set while a signal runs. Relaxed read-modify-writes on purpose: they see every overlap
    /// (an RMW reads the latest value) without adding happens-before edges, which would hide a
    /// publisher that forgets them.
    in_signal: AtomicBool,
    /// Elements received, updated with a Relaxed load and a separate store *outside* the lock
    /// below: if the publisher moves signalling to another thread without a happens-before
    /// edge, loom lets the load read a stale count, which shows as a mismatch with `progress`.
    shadow: AtomicU64,
    /// Everything else, under a lock, with a condition variable for the scenario to wait on.
    progress: Mutex<Progress>,
    changed: Condvar,
}

#[derive(Default)]
struct Progress {
    subscription: Option<SubscriptionRef>,
    received: u64,
    completes: usize,
    errors: usize,
    last_error: Option<String>,
    dropped: bool,
    violations: Vec<String>,
}

/// The totals of one interleaving.
pub(super) struct Totals {
    pub(super) received: u64,
    pub(super) completes: usize,
    pub(super) errors: usize,
    pub(super) last_error: Option<String>,
}

impl Record {
    pub(super) fn new() -> Arc<Record> {
        Arc::new(Record {
            in_signal: AtomicBool::new(false),
            shadow: AtomicU64::new(0),
            progress: Mutex::new(Progress::default()),
            changed: Condvar::new(),
        })
    }

    fn update(&self, f: impl FnOnce(&mut Progress)) {
        let mut p = self.progress.lock();
        f(&mut p);
        drop(p);
        self.changed.notify_all();
    }

    fn violation(&self, what: String) {
        self.update(|p| p.violations.push(what));
    }

    /// Waits until `until` holds (a blocking wait: loom reports a deadlock if it never does).
    fn wait_for<R>(&self, mut until: impl FnMut(&mut Progress) -> Option<R>) -> R {
        let mut p = self.progress.lock();
        loop {
            if let Some(r) = until(&mut p) {
                return r;
            }
            p = self.changed.wait(p);
        }
    }

    pub(super) fn wait_subscription(&self) -> SubscriptionRef {
        self.wait_for(|p| p.subscription.clone())
    }

    pub(super) fn await_received(&self, n: u64) {
        self.wait_for(|p| (p.received >= n || p.completes + p.errors > 0).then_some(()));
    }

    pub(super) fn await_terminal(&self) {
        self.wait_for(|p| (p.completes + p.errors > 0).then_some(()));
    }

    /// Cancels (3.13 is then due even without a terminal signal), waits for the publisher to drop
    /// the subscriber, and asserts every rule recorded, and at most `max` elements (1.1).
    pub(super) fn finish(&self, token: std::sync::Weak<()>, max: u64) -> Totals {
        let s = self.progress.lock().subscription.take();
        if let Some(s) = s {
            s.cancel();
        }
        self.wait_for(|p| p.dropped.then_some(()));
        assert!(
            token.upgrade().is_none(),
            "rule 3.13: the subscriber is still referenced"
        );
        let mut p = self.progress.lock();
        p.subscription = None;
        assert!(p.violations.is_empty(), "{}", p.violations.join("; "));
        assert!(
            p.completes + p.errors <= 1,
            "rule 1.7: {} terminal signals",
            p.completes + p.errors
        );
        assert!(
            p.received <= max,
            "rule 1.1: {} elements for {max} requested",
            p.received
        );
        Totals {
            received: p.received,
            completes: p.completes,
            errors: p.errors,
            last_error: p.last_error.take(),
        }
    }
}

/// The probe subscriber.
pub(super) struct Probe<T> {
    record: Arc<Record>,
    initial: u64,
    /// `Some((k, n))`: request `n` re-entrantly from inside the `k`-th `on_next` (1-based).
    reentrant: Option<(u64, u64)>,
    subscription: Option<SubscriptionRef>,
    subscribed: bool,
    terminated: bool,
    received: u64,
    /// A std `Arc` whose `Weak` the scenario keeps (loom has no `Weak`): the deterministic
    /// check of 3.13 at the end of each interleaving. Released in `drop` *before* the drop is
    /// recorded, so that a scenario that sees the drop recorded never finds the token alive.
    token: Option<StdArc<()>>,
    _marker: PhantomData<fn(T)>,
}

impl<T> fmt::Debug for Probe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

impl<T> Probe<T> {
    pub(super) fn new(
        record: &Arc<Record>,
        initial: u64,
        reentrant: Option<(u64, u64)>,
    ) -> (Self, std::sync::Weak<()>) {
        let token = StdArc::new(());
        let weak = StdArc::downgrade(&token);
        let probe = Probe {
            record: record.clone(),
            initial,
            reentrant,
            subscription: None,
            subscribed: false,
            terminated: false,
            received: 0,
            token: Some(token),
            _marker: PhantomData,
        };
        (probe, weak)
    }

    fn enter(&self, signal: &str) {
        if self.record.in_signal.swap(true, Ordering::Relaxed) {
            self.record.violation(format!(
                "rule 1.3: {signal} overlaps another signal (concurrent, or nested by recursion, 3.3)"
            ));
        }
        if self.terminated {
            self.record
                .violation(format!("rule 1.7: {signal} after the terminal signal"));
        }
        if !self.subscribed && signal != "on_subscribe" {
            self.record
                .violation(format!("rule 1.9: {signal} before on_subscribe"));
        }
    }

    fn exit(&self) {
        self.record.in_signal.store(false, Ordering::Relaxed);
    }

    fn terminal(&mut self, error: Option<Error>) {
        self.terminated = true;
        self.subscription = None; // 2.3, 2.4: dropped without being called
        self.record.update(|p| match error {
            Some(e) => {
                p.errors += 1;
                p.last_error = Some(e.to_string());
            }
            None => p.completes += 1,
        });
    }
}

impl<T: Send> Subscriber<T> for Probe<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.enter("on_subscribe");
        if self.subscribed {
            self.record
                .violation("rule 1.9/2.12: on_subscribe twice".to_owned());
        }
        self.subscribed = true;
        let s = subscription.clone();
        self.record.update(|p| p.subscription = Some(s));
        self.subscription = Some(subscription.clone());
        if self.initial > 0 {
            subscription.request(self.initial);
        }
        self.exit();
    }

    fn on_next(&mut self, _item: T) {
        self.enter("on_next");
        self.received += 1;
        let received = self.received;
        self.record.update(|p| p.received = received);
        // After the lock is released: see `Record::shadow`.
        let seen = self.record.shadow.load(Ordering::Relaxed);
        if seen + 1 != received {
            self.record.violation(format!(
                "rule 1.3: on_next #{received} does not happen-after on_next #{seen}+1 (signals handed between threads without synchronisation)"
            ));
        }
        self.record.shadow.store(received, Ordering::Relaxed);
        if let Some((k, n)) = self.reentrant {
            if k == received {
                if let Some(s) = &self.subscription {
                    s.request(n); // 3.2
                }
            }
        }
        self.exit();
    }

    fn on_error(&mut self, error: Error) {
        self.enter("on_error");
        self.terminal(Some(error));
        self.exit();
    }

    fn on_complete(&mut self) {
        self.enter("on_complete");
        self.terminal(None);
        self.exit();
    }
}

impl<T> Drop for Probe<T> {
    fn drop(&mut self) {
        drop(self.token.take());
        self.record.update(|p| p.dropped = true);
    }
}
