//! The subscribers of a plain-publisher merge: to the outer ([`OuterSubscriber`]) and to each
//! subscribed inner ([`InnerSubscriber`]).

use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef};

use super::core::{Arrival, Core};
use super::inner::{Inner, InnerSource};
use super::shared::InnerShared;
use super::typed::Start;
use super::{MergeError, Shared};
use crate::handoff::SpscProducer;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::Ordering;
use crate::panics;

/// The subscriber to one subscribed inner of a plain-publisher merge.
pub(crate) struct InnerSubscriber<U> {
    core: StdArc<Core<U>>,
    inner: StdArc<InnerShared<U>>,
    /// The queue's producer half, once made.
    producer: Option<SpscProducer<U>>,
    subscription: Option<SubscriptionRef>,
    /// Elements that went straight downstream since the last replenish.
    fast_consumed: usize,
    /// Ended (terminal signal, overflow): later signals are ignored.
    ended: bool,
}

impl<U> fmt::Debug for InnerSubscriber<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InnerSubscriber")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<U: Send + 'static> InnerSubscriber<U> {
    pub(crate) fn new(core: StdArc<Core<U>>, inner: StdArc<InnerShared<U>>) -> Self {
        InnerSubscriber {
            core,
            inner,
            producer: None,
            subscription: None,
            fast_consumed: 0,
            ended: false,
        }
    }

    /// Queues `u` (making the queue on first use); a full queue is the inner's
    /// missing-backpressure error. `true` if queued.
    fn enqueue(&mut self, u: U) -> bool {
        let capacity = self.core.config.prefetch;
        let producer = match &mut self.producer {
            Some(p) => p,
            None => {
                self.core
                    .counters
                    .counters()
                    .queues
                    .fetch_add(1, Ordering::Relaxed);
                self.producer.insert(self.inner.make_queue(capacity))
            }
        };
        if let Err(u) = producer.offer(u) {
            panics::drop_guarded(u);
            self.overflow(capacity);
            return false;
        }
        true
    }

    /// The inner sent more than it was asked for: it is cancelled and fails the merge (or,
    /// delaying errors, ends with that error).
    fn overflow(&mut self, capacity: usize) {
        self.ended = true;
        if let Some(s) = self.subscription.take() {
            s.cancel();
        }
        self.inner.set_done();
        self.core.list(&self.inner);
        self.core.error(
            Error::new(MergeError::MissingBackpressure { capacity }),
            false,
        );
    }
}

impl<U: Send + 'static> Subscriber<U> for InnerSubscriber<U> {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        if self.subscription.is_some() || self.ended {
            s.cancel(); // 2.5
            return;
        }
        if !self.inner.subscribed(&s) {
            self.ended = true;
            return;
        }
        self.subscription = Some(s.clone());
        s.request(self.core.config.prefetch as u64);
    }

    fn on_next(&mut self, u: U) {
        if self.ended || self.core.is_cancelled() {
            panics::drop_guarded(u); // 2.8
            return;
        }
        let limit = self.core.config.replenish();
        let InnerSubscriber {
            core,
            producer,
            fast_consumed,
            ..
        } = self;
        let mut replenish = false;
        let mut queued = None;
        // The fast path (RxJava's tryEmit): nobody drains, nothing of this inner waits in its
        // queue, downstream has demand: straight to `on_next`, no queue touched or made.
        let r = core.drain.try_fast(
            u,
            |st, u| {
                let empty = producer.as_ref().is_none_or(SpscProducer::is_empty)
                    || fault::active(Fault::MergeFastPathSkipsQueue);
                if st.finished() {
                    panics::drop_guarded(u);
                } else if empty && st.out.has_room(&core.demand) {
                    st.out.count_fast();
                    if let Err(p) = st.out.emit(u) {
                        core.subscriber_panicked(st, p);
                        return;
                    }
                    *fast_consumed += 1;
                    if *fast_consumed == limit {
                        *fast_consumed = 0;
                        replenish = true;
                    }
                } else {
                    queued = Some(u);
                }
            },
            |st| core.pass(st),
        );
        match r {
            Ok(()) => {
                if let Some(u) = queued {
                    // Behind this inner's queue, or no demand: queued; the drain was free a
                    // moment ago, so it is run for it.
                    if self.enqueue(u) {
                        self.core.list(&self.inner);
                        self.core.signal();
                    }
                } else {
                    self.core.after_fast();
                }
                if replenish {
                    if let Some(s) = &self.subscription {
                        s.request(limit as u64);
                    }
                }
            }
            Err(u) => {
                if self.enqueue(u) {
                    self.core.list(&self.inner);
                    self.core.signal();
                }
            }
        }
    }

    fn on_error(&mut self, e: Error) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.subscription = None;
        self.inner.set_done();
        self.core.list(&self.inner);
        self.core.error(e, false);
    }

    fn on_complete(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.subscription = None;
        self.inner.set_done();
        self.core.list(&self.inner);
        self.core.signal();
    }
}

/// The subscriber to the outer stream of a plain-publisher merge: maps each element to an
/// inner and starts it.
pub(crate) struct OuterSubscriber<T, U, F> {
    core: StdArc<Core<U>>,
    /// The function (with the publisher's counters).
    shared: StdArc<Shared<F>>,
    subscribed: bool,
    ended: bool,
    _t: PhantomData<fn(T)>,
}

impl<T, U, F> fmt::Debug for OuterSubscriber<T, U, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OuterSubscriber")
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl<T, U, F> OuterSubscriber<T, U, F> {
    pub(crate) fn new(core: StdArc<Core<U>>, shared: StdArc<Shared<F>>) -> Self {
        OuterSubscriber {
            core,
            shared,
            subscribed: false,
            ended: false,
            _t: PhantomData,
        }
    }
}

impl<T, U, I, F> Subscriber<T> for OuterSubscriber<T, U, F>
where
    T: Send + 'static,
    U: Send + 'static,
    I: Inner<U>,
    F: Fn(T) -> I + Send + Sync + 'static,
{
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        if std::mem::replace(&mut self.subscribed, true) {
            s.cancel(); // 2.5
            return;
        }
        self.core.outer_subscribed(s);
    }

    fn on_next(&mut self, t: T) {
        if self.ended || self.core.is_cancelled() {
            return;
        }
        let (f, core) = (&self.shared.f, &self.core);
        // A typed iterator is drained inside `visit` (its own calls guarded there); any other
        // inner comes back as its source.
        let source = match catch_unwind(AssertUnwindSafe(|| f(t).visit(Start(core)))) {
            Ok(Some(s)) => s,
            Ok(None) => return,
            Err(p) => {
                self.ended = true;
                self.core.cancel_outer();
                let e = Error::msg(format!(
                    "the merge's function panicked: {}",
                    panics::panic_message(&*p)
                ));
                self.core.error(e, true);
                return;
            }
        };
        start_inner(&self.core, source);
    }

    fn on_error(&mut self, e: Error) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.core.error(e, true);
    }

    fn on_complete(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.core.outer_complete();
    }
}

/// Runs one inner: a value or an iterator goes to the drain as it is; a publisher is
/// registered with the drain, then subscribed to.
pub(crate) fn start_inner<U: Send + 'static>(core: &StdArc<Core<U>>, source: InnerSource<U>) {
    match source {
        InnerSource::Empty => core.inner_empty(),
        InnerSource::Just(u) => core.arrive_value(u),
        InnerSource::Iter(it) => core.arrive(Arrival::Iter(it)),
        InnerSource::Publisher(p) => {
            core.counters
                .counters()
                .inner_subscriptions
                .fetch_add(1, Ordering::Relaxed);
            let inner = StdArc::new(InnerShared::new());
            core.arrive(Arrival::Sub(inner.clone()));
            if inner.is_cancelled() {
                return;
            }
            let sub = InnerSubscriber::new(core.clone(), inner.clone());
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| p.subscribe(Box::new(sub)))) {
                inner.set_done();
                core.list(&inner);
                let e = Error::msg(format!(
                    "an inner publisher panicked in subscribe: {}",
                    panics::panic_message(&*p)
                ));
                core.error(e, false);
            }
        }
    }
}
