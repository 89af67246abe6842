//! merge (seed 003, RxJava #1908): two inners, prefetch (queue capacity) 1–2, each driven by
//! hand — one on a thread of the model, one on the main thread — through the plain-publisher
//! merge. The elements count their live values, so a leak or a double drop shows in every
//! model; the probe records every signal and never panics inside one.
//!
//! * cancel from inside `on_next` racing the other inner's `on_next` (twin: a drain that
//!   ignores the cancel flag);
//! * an inner's element and completion racing the outer's completion (its twin, the drain
//!   looking at the inner's queue before its terminal flag, is no longer reached here since
//!   the ready list: see `inner_end_races_its_admission`);
//! * two inners racing one drain with one-by-one demand, so elements queue (twin: a fast path
//!   that does not look at the inner's own queue: an inner's elements leave out of order);
//! * a known iterator (the typed lane) arriving while a subscribed inner emits on another
//!   thread, under one-by-one demand: drained typed when it finds the drain free and nothing
//!   else waiting, boxed and served round-robin otherwise;
//! * a pulled outer (a known iterator, not subscribed) whose elements map to single values,
//!   delivered in value runs inside one hold of the drain, cancelled from another thread while
//!   the main thread's request pulls the next run (twin: the same drain ignoring the cancel
//!   flag keeps the subscriber);
//! * a pulled outer whose one inner must be subscribed, cancelled from another thread while
//!   `subscribe` pulls that inner: an inner that reaches the drain after the end is let go,
//!   never subscribed to and left alone (twin: the ended drain keeps it; `merge_hazard`
//!   found that one, 1 stream in about 1,000, as an island that waited forever);
//! * an inner's element and completion racing the visit that admits it (twin: the drain looks
//!   at the inner's queue before its terminal flag; with the ready list this is where that race
//!   is left, see `inner_end_races_its_admission`);
//! * the ready list: an inner's element queued while the drain visits that inner (after the
//!   pass took the list, around the visit's look at the queue) is delivered — the visit
//!   clears the inner's flag first, so a later element lists it again (twin: the flag
//!   cleared after the visit: the element waits in the queue forever).

use std::sync::{Arc as StdArc, Weak};

use rs_api::{BoxSubscriber, Error, Publisher, Subscriber, Subscription, SubscriptionRef};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use rs_impl::loom::sync::{Arc, Mutex};
use rs_impl::loom::thread;
use rs_impl::merge::{self, Inner, InnerSource, InnerVisitor, MergeConfig, MergeExt, Subscribed};

/// An element that counts its live values.
struct Tracked(u64, Arc<AtomicUsize>);

impl Tracked {
    fn new(x: u64, live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::AcqRel);
        Tracked(x, live.clone())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let before = self.1.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "an element was dropped twice");
    }
}

/// A publisher driven by hand: `subscribe` hands the subscriber its subscription and keeps it
/// for the model to signal.
struct Manual<T>(Arc<Mutex<Option<BoxSubscriber<T>>>>);

impl<T> Clone for Manual<T> {
    fn clone(&self) -> Self {
        Manual(self.0.clone())
    }
}

impl<T> Manual<T> {
    fn new() -> Self {
        Manual(Arc::new(Mutex::new(None)))
    }

    fn take(&self) -> BoxSubscriber<T> {
        self.0.lock().take().expect("subscribed")
    }
}

struct Ignored;

impl Subscription for Ignored {
    fn request(&self, _: u64) {}
    fn cancel(&self) {}
}

impl<T: Send + 'static> Publisher<T> for Manual<T> {
    fn subscribe(&self, mut subscriber: BoxSubscriber<T>) {
        subscriber.on_subscribe(StdArc::new(Ignored));
        *self.0.lock() = Some(subscriber);
    }
}

/// What the probe saw.
#[derive(Default)]
struct Seen {
    items: Vec<u64>,
    completes: usize,
    errors: usize,
    violations: Vec<String>,
    /// The subscription, for the model's main thread.
    subscription: Option<SubscriptionRef>,
    /// What the subscriber and the model asked for so far, counted before each `request`
    /// (rule 1.1: never more `on_next` than that).
    requested: u64,
}

/// The subscriber: requests `initial`, then `more` from inside each `on_next`; cancels from
/// inside `on_next` of the `cancel_after`-th element.
struct Probe {
    seen: Arc<Mutex<Seen>>,
    in_signal: Arc<AtomicBool>,
    subscription: Option<SubscriptionRef>,
    initial: u64,
    more: u64,
    cancel_after: Option<usize>,
    cancelled: bool,
    ended: bool,
    _token: StdArc<()>,
}

impl Probe {
    fn new(
        initial: u64,
        more: u64,
        cancel_after: Option<usize>,
    ) -> (Probe, Arc<Mutex<Seen>>, Weak<()>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let token = StdArc::new(());
        let weak = StdArc::downgrade(&token);
        let probe = Probe {
            seen: seen.clone(),
            in_signal: Arc::new(AtomicBool::new(false)),
            subscription: None,
            initial,
            more,
            cancel_after,
            cancelled: false,
            ended: false,
            _token: token,
        };
        (probe, seen, weak)
    }

    fn enter(&self, signal: &str) {
        if self.in_signal.swap(true, Ordering::Relaxed) {
            self.seen
                .lock()
                .violations
                .push(format!("rule 1.3: {signal} overlaps another signal"));
        }
        if self.ended {
            self.seen
                .lock()
                .violations
                .push(format!("rule 1.7: {signal} after the terminal signal"));
        }
        if self.cancelled {
            self.seen.lock().violations.push(format!(
                "rule 1.8: {signal} after a cancel made inside on_next"
            ));
        }
    }

    fn exit(&self) {
        self.in_signal.store(false, Ordering::Relaxed);
    }
}

impl Subscriber<Tracked> for Probe {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.enter("on_subscribe");
        self.seen.lock().subscription = Some(s.clone());
        self.seen.lock().requested += self.initial;
        s.request(self.initial);
        self.subscription = Some(s);
        self.exit();
    }

    fn on_next(&mut self, x: Tracked) {
        self.enter("on_next");
        let n = {
            let mut seen = self.seen.lock();
            seen.items.push(x.0);
            let n = seen.items.len();
            if n as u64 > seen.requested {
                let requested = seen.requested;
                seen.violations
                    .push(format!("rule 1.1: on_next #{n} with {requested} requested"));
            }
            n
        };
        drop(x);
        if self.cancel_after == Some(n) {
            self.cancelled = true;
            if let Some(s) = self.subscription.take() {
                s.cancel();
            }
        } else if self.more > 0 {
            if let Some(s) = &self.subscription {
                self.seen.lock().requested += self.more;
                s.request(self.more);
            }
        }
        self.exit();
    }

    fn on_error(&mut self, _: Error) {
        self.enter("on_error");
        self.ended = true;
        self.subscription = None;
        self.seen.lock().errors += 1;
        self.exit();
    }

    fn on_complete(&mut self) {
        self.enter("on_complete");
        self.ended = true;
        self.subscription = None;
        self.seen.lock().completes += 1;
        self.exit();
    }
}

/// Emits `items` (tracked), then completes.
fn emit(mut s: BoxSubscriber<Tracked>, items: &[u64], live: &Arc<AtomicUsize>) {
    for &x in items {
        s.on_next(Tracked::new(x, live));
    }
    s.on_complete();
}

/// The violations recorded, asserted empty; the totals.
fn finish(seen: &Arc<Mutex<Seen>>) -> Seen {
    let mut s = std::mem::take(&mut *seen.lock());
    s.subscription = None;
    assert!(s.violations.is_empty(), "{}", s.violations.join("; "));
    assert!(
        s.completes + s.errors <= 1,
        "rule 1.7: two terminal signals"
    );
    s
}

/// Rules 1.8, 3.13, no leak. Inner A (a thread) and inner B (the main thread) each send two
/// elements into a merge of prefetch 2; the subscriber asked for 4 and cancels from inside the
/// first `on_next`, whichever inner it came from. In every interleaving exactly that one
/// element arrives, nothing follows the cancel, the subscriber is dropped, and every element
/// made — delivered, queued, or sent after the cancel — is dropped exactly once.
pub(crate) fn cancel_races_inner_on_next() {
    let live = Arc::new(AtomicUsize::new(0));
    let (a, b) = (Manual::new(), Manual::new());
    let p = merge::merge_with(
        vec![Subscribed(a.clone()), Subscribed(b.clone())],
        MergeConfig::new().prefetch(2),
    );
    let (probe, seen, token) = Probe::new(4, 0, Some(1));
    p.subscribe(Box::new(probe));
    let (sa, sb) = (a.take(), b.take());
    let l = live.clone();
    let t = thread::spawn(move || emit(sa, &[0, 1], &l));
    emit(sb, &[10, 11], &live);
    t.join().unwrap();
    drop(p);
    let s = finish(&seen);
    assert_eq!(s.items.len(), 1, "rule 1.8: {:?} arrived", s.items);
    assert_eq!(
        s.completes + s.errors,
        0,
        "a terminal signal after the cancel"
    );
    assert!(
        token.upgrade().is_none(),
        "rule 3.13: the subscriber is kept"
    );
    assert_eq!(
        live.load(Ordering::Acquire),
        0,
        "leaked: an element was never dropped"
    );
}

/// Rules 1.1, 1.5 (the terminal signal after every queue drained), no leak. The outer (main
/// thread) sends one inner and completes, racing that inner's element and completion on a
/// thread of the model; queue capacity 1. In every interleaving the element arrives, then
/// exactly one completion.
pub(crate) fn inner_completion_races_outer() {
    let live = Arc::new(AtomicUsize::new(0));
    let outer: Manual<Subscribed<Manual<Tracked>>> = Manual::new();
    let inner = Manual::new();
    let p = outer
        .clone()
        .flat_map(|i: Subscribed<Manual<Tracked>>| i, 1, 1);
    let (probe, seen, _token) = Probe::new(u64::MAX, 0, None);
    p.subscribe(Box::new(probe));
    let mut so = outer.take();
    so.on_next(Subscribed(inner.clone()));
    let si = inner.take();
    let l = live.clone();
    let t = thread::spawn(move || emit(si, &[7], &l));
    so.on_complete();
    t.join().unwrap();
    drop(so);
    let s = finish(&seen);
    assert_eq!(s.items, vec![7], "elements lost before the completion");
    assert_eq!(s.completes, 1, "rule 1.5: no completion");
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// Rules 1.1, 1.3, each inner's order, no leak. Inners A (a thread) and B (the main thread)
/// each send two elements (prefetch 2) to a subscriber that asked for one: B's first takes
/// it, the rest meet no demand and queue. Then the main thread requests three more, racing
/// A's elements for the one drain (a late element of A may find demand and the drain free:
/// the fast path, which must not overtake A's queued element). In every interleaving all four
/// arrive, each inner's in its order, then one completion.
pub(crate) fn two_inners_race_one_drain() {
    let live = Arc::new(AtomicUsize::new(0));
    let (a, b) = (Manual::new(), Manual::new());
    let p = merge::merge_with(
        vec![Subscribed(a.clone()), Subscribed(b.clone())],
        MergeConfig::new().prefetch(2),
    );
    let (probe, seen, _token) = Probe::new(1, 0, None);
    p.subscribe(Box::new(probe));
    let (sa, sb) = (a.take(), b.take());
    let l = live.clone();
    let t = thread::spawn(move || emit(sa, &[0, 1], &l));
    emit(sb, &[10, 11], &live);
    let s = {
        let mut seen = seen.lock();
        seen.requested += 3;
        seen.subscription.clone().expect("subscribed")
    };
    s.request(3);
    drop(s);
    t.join().unwrap();
    drop(p);
    let s = finish(&seen);
    let of =
        |base: u64| -> Vec<u64> { s.items.iter().copied().filter(|x| x / 10 == base).collect() };
    assert_eq!(
        of(0),
        vec![0, 1],
        "an inner's elements out of order: {:?}",
        s.items
    );
    assert_eq!(
        of(1),
        vec![10, 11],
        "an inner's elements out of order: {:?}",
        s.items
    );
    assert_eq!(s.completes, 1, "rule 1.5: no completion");
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// An inner of the typed-lane model: a subscribed publisher, or a known iterator (handed to
/// the merge with its static type, as `source::range` is).
enum Mixed {
    Sub(Manual<Tracked>),
    Iter(Vec<Tracked>),
}

impl Inner<Tracked> for Mixed {
    fn into_source(self) -> InnerSource<Tracked> {
        match self {
            Mixed::Sub(m) => InnerSource::Publisher(Box::new(m)),
            Mixed::Iter(v) => InnerSource::Iter(Box::new(v.into_iter())),
        }
    }

    fn visit<V: InnerVisitor<Tracked>>(self, visitor: V) -> V::Out {
        match self {
            Mixed::Iter(v) => visitor.iter(v),
            sub => visitor.source(sub.into_source()),
        }
    }
}

/// Rules 1.1, 1.3, each inner's order, no leak. The outer (main thread) sends inner A, which
/// emits two elements on a thread of the model, then a known iterator of two, then completes;
/// the subscriber asked for three elements, and the main thread asks for one more after the
/// outer's completion, racing A. Whether the iterator finds the drain free and A gone (the
/// typed lane: it sends the one element the demand leaves, reads the demand again and stops)
/// or not (boxed, served round-robin), all four arrive, never past the demand, each inner's in
/// its order, then one completion.
pub(crate) fn typed_iterator_races_inner_on_next() {
    let live = Arc::new(AtomicUsize::new(0));
    let outer: Manual<Mixed> = Manual::new();
    let a = Manual::new();
    let p = outer.clone().flat_map(|m: Mixed| m, 2, 2);
    let (probe, seen, _token) = Probe::new(3, 0, None);
    p.subscribe(Box::new(probe));
    let mut so = outer.take();
    so.on_next(Mixed::Sub(a.clone()));
    let sa = a.take();
    let l = live.clone();
    let t = thread::spawn(move || emit(sa, &[0, 1], &l));
    so.on_next(Mixed::Iter(vec![
        Tracked::new(10, &live),
        Tracked::new(11, &live),
    ]));
    so.on_complete();
    let s = {
        let mut seen = seen.lock();
        seen.requested += 1;
        seen.subscription.clone().expect("subscribed")
    };
    s.request(1);
    drop(s);
    t.join().unwrap();
    drop(so);
    let s = finish(&seen);
    let of =
        |base: u64| -> Vec<u64> { s.items.iter().copied().filter(|x| x / 10 == base).collect() };
    assert_eq!(of(0), vec![0, 1], "out of order: {:?}", s.items);
    assert_eq!(of(1), vec![10, 11], "out of order: {:?}", s.items);
    assert_eq!(s.completes, 1, "rule 1.5: no completion");
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// Rules 1.1, 1.3, 3.13, no leak. A pulled outer of five elements, each mapped to a single
/// value: the subscriber asks for two (delivered inside `subscribe`, one value run), then a
/// thread of the model cancels while the main thread asks for two more (a second run, which
/// reads the cancel flag before each value). In every interleaving: two to four values
/// arrive, never past the demand, no signal overlaps, the outer is never read to its end (so
/// nothing completes), the subscriber is dropped once both calls have returned (by the
/// cancel, or by the run that saw it), and every value made is dropped exactly once.
pub(crate) fn value_runs_race_cancel() {
    let live = Arc::new(AtomicUsize::new(0));
    let l = live.clone();
    let p =
        rs_impl::source::from_iter(0u64..5).flat_map(move |x: u64| Some(Tracked::new(x, &l)), 2, 2);
    let (probe, seen, token) = Probe::new(2, 0, None);
    p.subscribe(Box::new(probe));
    let s = seen.lock().subscription.clone().expect("subscribed");
    assert_eq!(seen.lock().items, vec![0, 1], "the first run");
    let c = s.clone();
    let t = thread::spawn(move || c.cancel());
    seen.lock().requested += 2;
    s.request(2);
    drop(s);
    t.join().unwrap();
    drop(p);
    let s = finish(&seen);
    assert!((2..=4).contains(&s.items.len()), "{:?} arrived", s.items);
    assert_eq!(
        s.items,
        (0..s.items.len() as u64).collect::<Vec<_>>(),
        "out of order"
    );
    assert_eq!(s.completes + s.errors, 0, "a terminal signal");
    assert!(
        token.upgrade().is_none(),
        "rule 3.13: the subscriber is kept after the cancel"
    );
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// A hand-driven inner that records what became of its subscription: the subscriber is kept
/// until the subscription is cancelled (3.13), so that one never cancelled shows.
#[derive(Clone)]
struct Watched(Arc<WatchedState>);

struct WatchedState {
    subscribed: AtomicBool,
    /// Cancelled, and the subscriber kept while it was not.
    link: Mutex<(bool, Option<BoxSubscriber<u64>>)>,
}

struct WatchedSubscription(Arc<WatchedState>);

impl Subscription for WatchedSubscription {
    fn request(&self, _: u64) {}
    fn cancel(&self) {
        let kept = {
            let mut link = self.0.link.lock();
            link.0 = true;
            link.1.take()
        };
        drop(kept);
    }
}

impl Publisher<u64> for Watched {
    fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
        self.0.subscribed.store(true, Ordering::Release);
        subscriber.on_subscribe(StdArc::new(WatchedSubscription(self.0.clone())));
        let mut link = self.0.link.lock();
        if link.0 {
            drop(link);
            drop(subscriber); // cancelled inside `on_subscribe`
        } else {
            link.1 = Some(subscriber);
        }
    }
}

/// Requests from `on_subscribe` and hands the subscription to a new thread that cancels it.
struct CancelsFromAThread(Arc<Mutex<Option<thread::JoinHandle<()>>>>);

impl Subscriber<u64> for CancelsFromAThread {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(1);
        *self.0.lock() = Some(thread::spawn(move || s.cancel()));
    }
    fn on_next(&mut self, _: u64) {}
    fn on_error(&mut self, _: Error) {}
    fn on_complete(&mut self) {}
}

/// Rule 3.13, no leak. A merge of one subscribed inner (a pulled outer of one element, the
/// merge's own `merge_with`), subscribed on the main thread by a subscriber that requests in
/// `on_subscribe` and cancels from a thread it spawns there, racing `subscribe`'s pull of
/// the inner. When the cancel's last pass ends the drain between the outer's look at the
/// cancel flag and the inner's arrival, the drain is free, and the arrival is taken into the
/// ended drain's state: it must be let go (cancelled) there, so that the merge does not
/// subscribe to it, or cancels it if it did. In every interleaving the inner is never
/// subscribed to, or its subscription is cancelled.
pub(crate) fn inner_arrives_after_cancel() {
    let inner = Watched(Arc::new(WatchedState {
        subscribed: AtomicBool::new(false),
        link: Mutex::new((false, None)),
    }));
    let p = merge::merge_with(
        vec![Subscribed(inner.clone())],
        MergeConfig::new().prefetch(1),
    );
    let canceller = Arc::new(Mutex::new(None));
    p.subscribe(Box::new(CancelsFromAThread(canceller.clone())));
    let t = canceller
        .lock()
        .take()
        .expect("on_subscribe spawned the canceller");
    t.join().unwrap();
    drop(p);
    let subscribed = inner.0.subscribed.load(Ordering::Acquire);
    let cancelled = inner.0.link.lock().0;
    assert!(
        !subscribed || cancelled,
        "an inner subscribed to after the end was never cancelled"
    );
}

/// Records what it gets (requesting `want` in `on_subscribe`), and runs `hook` inside its
/// first `on_next`, with the merge's drain held.
struct Hooked {
    items: Arc<Mutex<Vec<u64>>>,
    completes: Arc<AtomicUsize>,
    want: u64,
    hook: Option<Box<dyn FnOnce() + Send>>,
}

impl Subscriber<Tracked> for Hooked {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(self.want);
    }
    fn on_next(&mut self, x: Tracked) {
        self.items.lock().push(x.0);
        drop(x);
        if let Some(hook) = self.hook.take() {
            hook();
        }
    }
    fn on_error(&mut self, _: Error) {}
    fn on_complete(&mut self) {
        self.completes.fetch_add(1, Ordering::AcqRel);
    }
}

/// The ready list (rule 1.1's counterpart: nothing requested is lost). Inners A and B of a
/// merge of prefetch 2, the subscriber asking for 3. B's element (main thread) takes the
/// fast path; inside its `on_next` — the drain held by the main thread — a thread sends A's
/// first element (it queues and lists A; joined there), and a second thread is started to
/// send A's second element. The main thread's drain then takes the ready list and visits A
/// while that second element arrives: before the visit's look at the queue (taken in the
/// visit), or after it — then it must find A's flag cleared and list A again, or the element
/// waits in A's queue forever (A never ends in this model). In every interleaving all three
/// arrive, A's in order.
pub(crate) fn ready_list_keeps_a_late_element() {
    let live = Arc::new(AtomicUsize::new(0));
    let (a, b) = (Manual::new(), Manual::new());
    let p = merge::merge_with(
        vec![Subscribed(a.clone()), Subscribed(b.clone())],
        MergeConfig::new().prefetch(2),
    );
    let items = Arc::new(Mutex::new(Vec::new()));
    let sa: Arc<Mutex<Option<BoxSubscriber<Tracked>>>> = Arc::new(Mutex::new(None));
    let second = Arc::new(Mutex::new(None));
    let hook = {
        let (sa, second, live) = (sa.clone(), second.clone(), live.clone());
        Box::new(move || {
            let (s1, l1) = (sa.clone(), live.clone());
            thread::spawn(move || {
                let mut s = s1.lock().take().expect("A subscribed");
                s.on_next(Tracked::new(0, &l1));
                *s1.lock() = Some(s);
            })
            .join()
            .unwrap();
            let (s2, l2) = (sa.clone(), live.clone());
            *second.lock() = Some(thread::spawn(move || {
                let mut s = s2.lock().take().expect("A subscribed");
                s.on_next(Tracked::new(1, &l2));
                *s2.lock() = Some(s);
            }));
        }) as Box<dyn FnOnce() + Send>
    };
    p.subscribe(Box::new(Hooked {
        items: items.clone(),
        completes: Arc::new(AtomicUsize::new(0)),
        want: 3,
        hook: Some(hook),
    }));
    *sa.lock() = Some(a.take());
    let mut sb = b.take();
    sb.on_next(Tracked::new(10, &live));
    let t = second.lock().take().expect("the hook ran");
    t.join().unwrap();
    let seen = items.lock().clone();
    let of = |base: u64| -> Vec<u64> { seen.iter().copied().filter(|x| x / 10 == base).collect() };
    assert_eq!(of(1), vec![10], "{seen:?}");
    assert_eq!(
        of(0),
        vec![0, 1],
        "an element of A was never delivered: {seen:?}"
    );
    // Both inners end: the merge completes and lets everything go.
    sb.on_complete();
    let mut s = sa.lock().take().expect("A subscribed");
    s.on_complete();
    drop((s, sb, p));
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// Rules 1.5, 1.1's counterpart (nothing lost), no leak. The end of an inner racing the
/// visit that admits it: a merge with a hand-driven outer (prefetch 1), inner B on the main
/// thread. B's element takes the fast path; inside its `on_next` — the drain held by the main
/// thread — a thread sends the outer's inner A (the drain is busy: A waits in the shared list
/// while it is subscribed to; joined there), and a second thread is started to send A's
/// element and completion. The main thread's drain then admits A and visits it while A's
/// element and end arrive: a visit that looked at A's queue (not made yet) before its end
/// would take A for ended and empty. In every interleaving A's element and B's arrive, then
/// one completion.
///
/// (`inner_completion_races_outer` aimed at the same race, but since the ready list the drain
/// visits an inner only when it was listed: there, A is admitted and visited before it is
/// subscribed, and its element lists it again, so no visit runs while its element and end
/// arrive. This model reaches that race through an admission made while A is subscribed.)
pub(crate) fn inner_end_races_its_admission() {
    let live = Arc::new(AtomicUsize::new(0));
    let outer: Manual<Subscribed<Manual<Tracked>>> = Manual::new();
    let (a, b) = (Manual::new(), Manual::new());
    let p = outer
        .clone()
        .flat_map(|i: Subscribed<Manual<Tracked>>| i, 2, 1);
    let items = Arc::new(Mutex::new(Vec::new()));
    let completes = Arc::new(AtomicUsize::new(0));
    let so: Arc<Mutex<Option<BoxSubscriber<Subscribed<Manual<Tracked>>>>>> =
        Arc::new(Mutex::new(None));
    let second = Arc::new(Mutex::new(None));
    let hook = {
        let (so, second, live, a) = (so.clone(), second.clone(), live.clone(), a.clone());
        Box::new(move || {
            let (so1, a1) = (so.clone(), a.clone());
            thread::spawn(move || {
                let mut s = so1.lock().take().expect("the outer subscribed");
                s.on_next(Subscribed(a1));
                *so1.lock() = Some(s);
            })
            .join()
            .unwrap();
            *second.lock() = Some(thread::spawn(move || emit(a.take(), &[7], &live)));
        }) as Box<dyn FnOnce() + Send>
    };
    p.subscribe(Box::new(Hooked {
        items: items.clone(),
        completes: completes.clone(),
        want: 2,
        hook: Some(hook),
    }));
    let mut o = outer.take();
    o.on_next(Subscribed(b.clone()));
    *so.lock() = Some(o);
    let mut sb = b.take();
    sb.on_next(Tracked::new(10, &live));
    let t = second.lock().take().expect("the hook ran");
    t.join().unwrap();
    let mut o = so.lock().take().expect("the outer subscribed");
    o.on_complete();
    sb.on_complete();
    drop((o, sb, p));
    let mut seen = items.lock().clone();
    seen.sort_unstable();
    assert_eq!(seen, vec![7, 10], "elements lost before the completion");
    assert_eq!(
        completes.load(Ordering::Acquire),
        1,
        "rule 1.5: no completion"
    );
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

#[test]
fn merge_inner_end_races_its_admission() {
    loom::model(inner_end_races_its_admission);
}

#[test]
fn merge_ready_list_keeps_a_late_element() {
    loom::model(ready_list_keeps_a_late_element);
}

crate::loom_rejects!(
    merge_model_rejects_a_ready_flag_cleared_after_the_visit,
    "never delivered",
    fault rs_impl::loom::Fault::MergeUnlistsAfterVisit,
    ready_list_keeps_a_late_element
);

#[test]
fn merge_inner_arrives_after_cancel() {
    loom::model(inner_arrives_after_cancel);
}

crate::loom_rejects!(
    merge_model_rejects_an_inner_kept_after_the_end,
    "never cancelled",
    fault rs_impl::loom::Fault::MergeAdmitsAfterEnd,
    inner_arrives_after_cancel
);

#[test]
fn merge_value_runs_race_cancel() {
    loom::model(value_runs_race_cancel);
}

#[test]
fn merge_typed_iterator_races_inner_on_next() {
    loom::model(typed_iterator_races_inner_on_next);
}

#[test]
fn merge_cancel_races_inner_on_next() {
    loom::model(cancel_races_inner_on_next);
}

#[test]
fn merge_inner_completion_races_outer() {
    loom::model(inner_completion_races_outer);
}

#[test]
fn merge_two_inners_race_one_drain() {
    loom::model(two_inners_race_one_drain);
}

crate::loom_rejects!(
    merge_model_rejects_a_drain_that_ignores_cancel,
    "rule 1.8",
    fault rs_impl::loom::Fault::MergeIgnoresCancel,
    cancel_races_inner_on_next
);

crate::loom_rejects!(
    merge_model_rejects_value_runs_that_ignore_cancel,
    "rule 3.13",
    fault rs_impl::loom::Fault::MergeIgnoresCancel,
    value_runs_race_cancel
);

crate::loom_rejects!(
    merge_model_rejects_an_end_seen_after_the_queue,
    "elements lost before the completion",
    fault rs_impl::loom::Fault::MergeEndBeforeQueue,
    inner_end_races_its_admission
);

crate::loom_rejects!(
    merge_model_rejects_a_typed_lane_that_reads_the_demand_once,
    "rule 1.1",
    fault rs_impl::loom::Fault::MergeTypedReadsDemandOnce,
    typed_iterator_races_inner_on_next
);

crate::loom_rejects!(
    merge_model_rejects_a_fast_path_past_the_queue,
    "out of order",
    fault rs_impl::loom::Fault::MergeFastPathSkipsQueue,
    two_inners_race_one_drain
);
