//! Processors: stages that are both a [`Subscriber`] upstream and a [`Publisher`] downstream.
//!
//! # Which multicast processor?
//!
//! Two processors pass every element, unchanged, to every current subscriber. They differ in
//! **who sets the pace**:
//!
//! | | [`IdentityProcessor`] (here) | [`FanoutProcessor`](crate::fanout::FanoutProcessor) |
//! |---|---|---|
//! | emission | **coordinated**: an element goes out only when *every* subscriber has demand for it, to all of them in the same pass | **independent**: each subscriber reads at its own pace from one shared buffer |
//! | a slow subscriber | holds every subscriber back at once (they move in lock-step) | holds only the buffer: the others run ahead by up to its capacity, then the upstream waits |
//! | what subscribers see | the same elements at the same moment; no subscriber ever gets ahead of another | the same elements in the same order, at different times |
//! | upstream demand | `buffer_size` at once, `buffer_size / 2` after each such batch delivered | the buffer's free space, in batches of a quarter of the capacity |
//! | cost per element | a pass over all subscribers' demand per batch | the deliveries only (O(1) amortised per read whatever the number of subscribers; see the fanout's docs) |
//! | the last subscriber leaving | cancels the upstream; later subscribers are refused | cancels the upstream by default ([`LastSubscriberPolicy`](crate::fanout::LastSubscriberPolicy) can keep buffering) |
//!
//! Use **`IdentityProcessor`** when subscribers must stay in step — the JVM reference
//! processor's semantics (`IdentityProcessorVerification` with coordinated emission), a
//! "broadcast the current element to everyone" stage where no consumer may be ahead of
//! another, or a small number of subscribers that always request together. Use
//! **`FanoutProcessor`** (or, with a producer handle instead of an upstream, the fanout
//! [`channel`](crate::fanout::channel)) for everything else, in particular when subscribers
//! run at different speeds or there are many of them: a fast subscriber is never held back
//! by a slow one's *requests*, only by the bounded buffer.
//!
//! # Contract of [`IdentityProcessor`]
//!
//! The reference identity processor passes every element through unchanged, to **every**
//! current subscriber (multicast), with **coordinated emission**: an element leaves the buffer
//! only when every subscriber has demand for it, so all subscribers see the same elements in the
//! same order from the moment they join.
//!
//! * **Bounded buffer:** it requests `buffer_size` elements from upstream as soon as it is
//!   subscribed, and replenishes `buffer_size / 2` (at least 1) each time that many have been
//!   delivered. It never holds more than `buffer_size` elements: a slow subscriber slows everyone
//!   (backpressure), nobody loses an element.
//! * **Late subscribers** start with the oldest element still buffered; elements delivered before
//!   they joined are gone. A subscriber that joins after the end gets `on_subscribe` and the
//!   terminal signal at once.
//! * **Completion** reaches subscribers after the buffered elements. **Errors** are forwarded at
//!   once (rule 4.2), dropping buffered elements.
//! * **Cancel:** a cancelled subscriber is dropped (3.13). When the last subscriber leaves —
//!   by cancel, by `request(0)` or by panicking — the processor cancels its upstream (as the JVM
//!   TCK's processor tests expect; rule 3.14 allows it) and later subscribers are refused with
//!   `on_error` ([`SpecViolation::Rejected`]).
//! * **`request(0)`** fails that subscriber alone with the 3.9 error. A panicking subscriber is
//!   cancelled; the others keep every element (2.13).
//! * **Upstream:** the first `on_subscribe` wins; any other subscription is cancelled (2.5).
//!   Elements beyond the requested amount (an upstream breaking 1.1) fail the processor.
//! * **Threads:** signals are delivered, serially per processor, by whichever thread drives the
//!   [serial drain loop](crate::serial): the upstream's thread, or a downstream `request`/
//!   `cancel` caller. No thread of its own.
//! * **Cost per element:** one lock (the drain loop's own) when the upstream's `on_next` finds
//!   the processor idle, as with a synchronous upstream: the element goes straight into the
//!   drainer's buffer. While another thread drains, `on_next` posts to an inbox (one lock) that
//!   the drainer empties once per pass. Each subscriber's demand is read once per batch of
//!   deliveries (the smallest demand is how many elements can go to everyone), and a leaving
//!   subscriber costs one pass over the list, done only when someone left; no allocation per
//!   element, one `clone` per subscriber but the last.
//!
//! # Examples
//!
//! ```
//! use rs_api::{Publisher, PublisherExt};
//! use rs_impl::processor::IdentityProcessor;
//! use rs_impl::{source, subscriber::{collect, RequestStrategy}};
//!
//! let processor = IdentityProcessor::<u32>::new(4);
//! let (a, ra) = collect(RequestStrategy::OneByOne);
//! let (b, rb) = collect(RequestStrategy::Prefetch(8));
//! processor.subscribe(Box::new(a));
//! processor.subscribe(Box::new(b));
//! source::range(0u32..10).subscribe_with(processor.clone());
//! assert_eq!(ra.wait().unwrap(), (0..10).collect::<Vec<_>>());
//! assert_eq!(rb.wait().unwrap(), (0..10).collect::<Vec<_>>());
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
// Subscriptions are handed out as `rs_api::SubscriptionRef` (a std `Arc<dyn _>`), so the
// handles are std `Arc`s in every build; the atomics and locks inside come from the facade.
use std::sync::Arc;

use rs_api::SubscriptionRef;
use rs_api::{BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription};

use crate::demand::Demand;
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::Mutex;
use crate::panics;
use crate::serial::DrainLoop;

/// A multicast identity processor with a bounded buffer and coordinated emission (see the
/// [module docs](self) for when to use it rather than the fanout's processor).
///
/// A cheap `Clone` handle: move one clone into the upstream's `subscribe`, subscribe
/// downstream subscribers to another. See the [module documentation](self) for the contract.
#[must_use = "a processor does nothing until subscribed to an upstream and subscribed to"]
pub struct IdentityProcessor<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for IdentityProcessor<T> {
    fn clone(&self) -> Self {
        IdentityProcessor {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for IdentityProcessor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityProcessor")
            .field("buffer_size", &self.shared.buffer_size)
            .finish_non_exhaustive()
    }
}

/// What upstream (while another thread drains) and new subscribers hand to the drainer.
struct Inbox<T> {
    /// Elements received from upstream while the drain loop was busy, in order.
    elements: VecDeque<T>,
    /// Upstream's terminal signal, when it came while the drain loop was busy: `Some(None)`
    /// completion, `Some(Some(e))` failure.
    terminal: Option<Option<Error>>,
    /// Subscribers waiting for their `on_subscribe`.
    joining: Vec<(BoxSubscriber<T>, Arc<Downstream<T>>)>,
    /// Upstream's subscription, until the drainer takes it over.
    upstream: Option<SubscriptionRef>,
}

struct Shared<T> {
    /// Capacity of the buffer; also the upstream prefetch. Upstream demand is replenished only
    /// as elements leave, so more than this many buffered means upstream broke rule 1.1.
    buffer_size: usize,
    /// What upstream and new subscribers hand over when they cannot drain themselves; short
    /// critical sections, never held while calling out.
    inbox: Mutex<Inbox<T>>,
    /// Whether the inbox holds anything: set under the inbox lock by whoever fills it, cleared
    /// under it by the drainer, which takes the lock only when this is set. An element that
    /// arrives while nobody drains never touches the inbox (see `on_next`).
    inbox_pending: AtomicBool,
    /// Set when a subscriber cancelled or sent `request(0)`: the drainer looks for leaving
    /// subscribers only then (no scan per element).
    leaving: AtomicBool,
    /// Set once an upstream subscription has been accepted (2.5 for later ones).
    has_upstream: AtomicBool,
    drain: DrainLoop<State<T>>,
}

/// One downstream subscriber, as the drainer keeps it.
struct Active<T> {
    subscriber: BoxSubscriber<T>,
    handle: Arc<Downstream<T>>,
    emitted: u64,
}

/// The drainer-only state.
struct State<T> {
    /// Elements received from upstream and not yet delivered, in order (at most
    /// `buffer_size`).
    buffer: VecDeque<T>,
    /// Upstream's terminal signal, once the drainer has it.
    terminal: Option<Option<Error>>,
    upstream: Option<SubscriptionRef>,
    /// Delivered since the last replenishing request.
    delivered_since_request: u64,
    subscribers: Vec<Active<T>>,
    /// Set when a subscriber panicked in `on_next` during this pass (it leaves, 2.13).
    panicked: bool,
    /// Set when upstream terminated (and, for completion, the buffer drained) or was
    /// cancelled because the last subscriber left; later subscribers get this at once.
    ended: Option<Ending>,
}

#[derive(Clone)]
enum Ending {
    Completed,
    Failed(Error),
    UpstreamCancelled,
}

/// A signal from upstream, as the drainer receives it.
enum Signal<T> {
    Next(T),
    Terminal(Option<Error>),
}

/// The subscription of one downstream subscriber.
struct Downstream<T> {
    demand: Demand,
    cancelled: AtomicBool,
    bad_request: AtomicBool,
    shared: Arc<Shared<T>>,
}

impl<T: Clone + Send + 'static> IdentityProcessor<T> {
    /// A processor that buffers at most `buffer_size` elements.
    ///
    /// # Panics
    ///
    /// If `buffer_size` is 0: the buffer must hold at least one element.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = rs_impl::processor::IdentityProcessor::<u8>::new(16);
    /// assert_eq!(p.buffer_size(), 16);
    /// ```
    #[track_caller]
    pub fn new(buffer_size: usize) -> Self {
        assert!(
            buffer_size > 0,
            "IdentityProcessor::new(0): the buffer must hold at least one element"
        );
        IdentityProcessor {
            shared: Arc::new(Shared {
                buffer_size,
                inbox: Mutex::new(Inbox {
                    elements: VecDeque::new(),
                    terminal: None,
                    joining: Vec::new(),
                    upstream: None,
                }),
                inbox_pending: AtomicBool::new(false),
                leaving: AtomicBool::new(false),
                has_upstream: AtomicBool::new(false),
                drain: DrainLoop::new(State {
                    buffer: VecDeque::with_capacity(buffer_size),
                    terminal: None,
                    upstream: None,
                    delivered_since_request: 0,
                    subscribers: Vec::new(),
                    panicked: false,
                    ended: None,
                }),
            }),
        }
    }

    /// The buffer's capacity.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::processor::IdentityProcessor::<u8>::new(3).buffer_size(), 3);
    /// ```
    pub fn buffer_size(&self) -> usize {
        self.shared.buffer_size
    }
}

impl<T: Clone + Send + 'static> Shared<T> {
    fn run(&self) {
        self.drain.drain(|st| self.pass(st));
    }

    /// Puts something into the inbox for the drainer (then call [`run`](Self::run)).
    fn post(&self, f: impl FnOnce(&mut Inbox<T>)) {
        let mut inbox = self.inbox.lock();
        f(&mut inbox);
        self.inbox_pending.store(true, Ordering::Release);
    }

    /// An upstream signal: straight into the drainer's state when nobody drains (the hot path:
    /// one lock, the drain loop's own, per element), through the inbox otherwise. Upstream
    /// signals are serial (1.3), so both ways keep their order (see
    /// [`DrainLoop::try_drain_with`]).
    fn upstream_signal(&self, signal: Signal<T>) {
        let accepted = self.drain.try_drain_with(
            signal,
            |st, signal| self.receive(st, signal),
            |st| self.pass(st),
        );
        if let Err(signal) = accepted {
            self.post(|inbox| match signal {
                Signal::Next(item) => inbox.elements.push_back(item),
                Signal::Terminal(t) => {
                    inbox.terminal.get_or_insert(t);
                }
            });
            self.run();
        }
    }

    fn batch(&self) -> u64 {
        (self.buffer_size as u64 / 2).max(1)
    }

    /// The drainer takes an upstream signal.
    fn receive(&self, st: &mut State<T>, signal: Signal<T>) {
        if st.ended.is_some() || st.terminal.is_some() {
            return; // nothing after the end (an upstream breaking 1.7, or after our cancel)
        }
        match signal {
            Signal::Next(item) if st.buffer.len() < self.buffer_size => st.buffer.push_back(item),
            Signal::Next(_) => {
                // Upstream sent more than requested (1.1): fail downstream.
                st.buffer.clear();
                st.terminal = Some(Some(Error::msg(
                    "rule 1.1 violated by the processor's upstream: more elements than requested",
                )));
            }
            Signal::Terminal(t) => st.terminal = Some(t),
        }
    }

    fn pass(&self, st: &mut State<T>) {
        loop {
            let mut progressed = false;
            let mut joining = Vec::new();
            let mut upstream = None;
            if self.inbox_pending.load(Ordering::Acquire) {
                let mut inbox = self.inbox.lock();
                self.inbox_pending.store(false, Ordering::Relaxed);
                for item in inbox.elements.drain(..) {
                    self.receive(st, Signal::Next(item));
                }
                if let Some(t) = inbox.terminal.take() {
                    self.receive(st, Signal::Terminal(t));
                }
                joining = std::mem::take(&mut inbox.joining);
                upstream = inbox.upstream.take();
            }

            if let Some(up) = upstream {
                st.upstream = Some(up.clone());
                up.request(self.buffer_size as u64);
                progressed = true;
            }

            for (mut subscriber, handle) in joining {
                progressed = true;
                let sref: SubscriptionRef = handle.clone();
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| subscriber.on_subscribe(sref))) {
                    handle.cancelled.store(true, Ordering::Release);
                    panics::subscriber_panicked("on_subscribe", p);
                    continue;
                }
                if let Some(ending) = st.ended.clone() {
                    handle.cancelled.store(true, Ordering::Release);
                    signal_end(subscriber, &ending);
                    continue;
                }
                st.subscribers.push(Active {
                    subscriber,
                    handle,
                    emitted: 0,
                });
            }

            // Cancelled, misbehaving (request(0)) and panicked subscribers leave. (A load
            // first: the flag is rarely set, and a plain load is cheaper than a swap.)
            let flagged =
                self.leaving.load(Ordering::Acquire) && self.leaving.swap(false, Ordering::AcqRel);
            if (flagged | std::mem::take(&mut st.panicked)) && self.remove_leavers(st) {
                progressed = true;
                if st.subscribers.is_empty() && st.ended.is_none() && st.terminal.is_none() {
                    // The last subscriber left: cancel upstream (JVM TCK processor behaviour).
                    if let Some(up) = st.upstream.take() {
                        up.cancel();
                    }
                    st.ended = Some(Ending::UpstreamCancelled);
                    st.buffer.clear();
                }
            }

            if st.ended.is_none() {
                // 4.2: an error goes out at once, dropping what is buffered.
                if let Some(Some(e)) = &st.terminal {
                    let e = e.clone();
                    self.end(st, Ending::Failed(e));
                    return;
                }
                // Delivery stops when demand or elements run out (more needs new work, which
                // the drain loop records) or when someone leaves (handled right away).
                progressed |= self.deliver_while_everyone_has_demand(st);
                if st.buffer.is_empty() && st.terminal.is_some() {
                    self.end(st, Ending::Completed);
                    return;
                }
            }

            if !progressed {
                return;
            }
        }
    }

    /// Removes the subscribers that leave (see [`leaves`](Self::leaves)) in one pass over the
    /// list, keeping the others in order; returns whether any left.
    fn remove_leavers(&self, st: &mut State<T>) -> bool {
        let mut kept = 0;
        for i in 0..st.subscribers.len() {
            if !self.leaves(&mut st.subscribers[i]) {
                st.subscribers.swap(kept, i);
                kept += 1;
            }
        }
        if kept == st.subscribers.len() {
            return false;
        }
        panics::drop_guarded(st.subscribers.split_off(kept));
        true
    }

    /// Whether `a` leaves now: cancelled, or failed by its own `request(0)` (3.9).
    fn leaves(&self, a: &mut Active<T>) -> bool {
        if a.handle.cancelled.load(Ordering::Acquire) {
            return true;
        }
        if a.handle.bad_request.load(Ordering::Acquire) {
            a.handle.cancelled.store(true, Ordering::Release);
            let e: Error = SpecViolation::NonPositiveRequest.into();
            let s = &mut a.subscriber;
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_error(e))) {
                panics::subscriber_panicked("on_error", p);
            }
            return true;
        }
        false
    }

    /// Coordinated emission: delivers buffered elements for as long as every subscriber has
    /// demand. Reads each subscriber's demand once per batch (the smallest outstanding demand
    /// is how many elements can go to everyone), not once per element. Stops early when a
    /// subscriber leaves (cancel, `request(0)`, panic), so that it gets nothing more, and then
    /// returns `true`: the caller removes it and delivers on.
    fn deliver_while_everyone_has_demand(&self, st: &mut State<T>) -> bool {
        while !st.buffer.is_empty() && !st.subscribers.is_empty() {
            let credit = st
                .subscribers
                .iter()
                .map(|a| a.handle.demand.outstanding(a.emitted))
                .min()
                .unwrap_or(0);
            if credit == 0 {
                break;
            }
            let batch = usize::try_from(credit)
                .unwrap_or(usize::MAX)
                .min(st.buffer.len());
            for _ in 0..batch {
                let Some(item) = st.buffer.pop_front() else {
                    break;
                };
                self.deliver(st, item);
                if st.panicked || self.leaving.load(Ordering::Acquire) {
                    return true;
                }
            }
        }
        false
    }

    /// Delivers one element to every subscriber and replenishes upstream demand.
    fn deliver(&self, st: &mut State<T>, item: T) {
        let last = st.subscribers.len() - 1;
        let mut item = Some(item);
        for (i, a) in st.subscribers.iter_mut().enumerate() {
            a.emitted += 1;
            let value = if i == last {
                item.take().expect("one element per subscriber")
            } else {
                item.clone().expect("one element per subscriber")
            };
            let s = &mut a.subscriber;
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_next(value))) {
                // 2.13: cancel that subscriber; the others keep every element.
                a.handle.cancelled.store(true, Ordering::Release);
                st.panicked = true;
                panics::subscriber_panicked("on_next", p);
            }
        }
        st.delivered_since_request += 1;
        if st.delivered_since_request >= self.batch() {
            let n = st.delivered_since_request;
            st.delivered_since_request = 0;
            if let Some(up) = &st.upstream {
                up.request(n);
            }
        }
    }

    /// Sends the terminal signal to everyone and remembers it for late subscribers.
    fn end(&self, st: &mut State<T>, ending: Ending) {
        st.ended = Some(ending.clone());
        st.upstream = None;
        st.buffer.clear();
        for a in st.subscribers.drain(..) {
            a.handle.cancelled.store(true, Ordering::Release);
            signal_end(a.subscriber, &ending);
        }
    }
}

/// Delivers a terminal signal and drops the subscriber (1.6, 3.13).
fn signal_end<T>(mut subscriber: BoxSubscriber<T>, ending: &Ending) {
    let result = match ending {
        Ending::Completed => catch_unwind(AssertUnwindSafe(|| subscriber.on_complete())),
        Ending::Failed(e) => {
            let e = e.clone();
            catch_unwind(AssertUnwindSafe(|| subscriber.on_error(e)))
        }
        Ending::UpstreamCancelled => {
            let e: Error = SpecViolation::Rejected {
                reason: "the processor's upstream was cancelled when its last subscriber left"
                    .into(),
            }
            .into();
            catch_unwind(AssertUnwindSafe(|| subscriber.on_error(e)))
        }
    };
    if let Err(p) = result {
        panics::subscriber_panicked("terminal signal", p);
    }
    panics::drop_guarded(subscriber);
}

impl<T: Clone + Send + 'static> Subscription for Downstream<T> {
    fn request(&self, n: u64) {
        if self.cancelled.load(Ordering::Acquire) {
            return; // 3.6
        }
        if self.demand.request(n).is_err() {
            self.bad_request.store(true, Ordering::Release);
            self.shared.leaving.store(true, Ordering::Release);
        }
        self.shared.run();
    }

    fn cancel(&self) {
        if self.cancelled.swap(true, Ordering::AcqRel) {
            return; // 3.7
        }
        self.shared.leaving.store(true, Ordering::Release);
        self.shared.run();
    }
}

impl<T: Clone + Send + 'static> Publisher<T> for IdentityProcessor<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        let handle = Arc::new(Downstream {
            demand: Demand::new(),
            cancelled: AtomicBool::new(false),
            bad_request: AtomicBool::new(false),
            shared: self.shared.clone(),
        });
        self.shared
            .post(|inbox| inbox.joining.push((subscriber, handle)));
        self.shared.run();
    }
}

impl<T: Clone + Send + 'static> Subscriber<T> for IdentityProcessor<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if self.shared.has_upstream.swap(true, Ordering::AcqRel) {
            subscription.cancel(); // 2.5
            return;
        }
        self.shared
            .post(|inbox| inbox.upstream = Some(subscription));
        self.shared.run();
    }

    fn on_next(&mut self, item: T) {
        self.shared.upstream_signal(Signal::Next(item));
    }

    fn on_error(&mut self, error: Error) {
        self.shared.upstream_signal(Signal::Terminal(Some(error)));
    }

    fn on_complete(&mut self) {
        self.shared.upstream_signal(Signal::Terminal(None));
    }
}
