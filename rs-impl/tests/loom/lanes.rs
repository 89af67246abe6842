//! Keyed lanes (`rs_impl::lanes`): 2 lanes of capacity 1 (rings of 2), the upstream island
//! polled by `loom::future::block_on` on a thread of the model, and the lanes' islands (and
//! the merging island) on the other. The elements count their live values, so every model
//! also checks that nothing leaks and nothing is dropped twice.
//!
//! | model | race | twin (fault) |
//! |---|---|---|
//! | `full_lane_races_next_element` | every element keyed to one lane: the dispatcher finds the lane full (or not yet granted) and holds the next element, racing the lane's grant | `LaneFullDrops`: the element for a full lane dropped → "lost" |
//! | `cancel_races_lane_drain` | each lane's subscriber cancels from inside its first `on_next` while the dispatcher flushes into the lanes and the lanes drain their rings | `CancelForgetsBuffer`: a lane's leave skips its buffered input → "leaked" |
//! | `completion_after_last_lane_drains` | merged lanes: the lanes complete on one thread while the merging island drains them on the other; the output completes only after the last lane drained | `LanesCompleteOnFirstLane` → "elements lost before the completion" |

use std::sync::{Arc as StdArc, Weak};

use rs_api::{BoxSubscriber, Error, Subscriber, SubscriptionRef};
use rs_impl::flow::Flow;
use rs_impl::island::Island;
use rs_impl::lanes::{lane_of, LaneKey, LanesConfig};
use rs_impl::loom::sync::atomic::{AtomicUsize, Ordering};
use rs_impl::loom::sync::{Arc, Mutex};
use rs_impl::loom::thread;

/// An element (value, key) that counts its live values.
struct Tracked(u64, u64, Arc<AtomicUsize>);

impl Tracked {
    fn new(x: u64, key: u64, live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::AcqRel);
        Tracked(x, key, live.clone())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let before = self.2.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "an element was dropped twice");
    }
}

/// The first key that goes to `lane` of 2.
fn key_for(lane: usize) -> u64 {
    (0u64..)
        .find(|k| lane_of(k.lane_hash(), 2) == lane)
        .unwrap()
}

/// What one subscriber saw.
#[derive(Clone)]
struct Seen {
    items: Arc<Mutex<Vec<u64>>>,
    completes: Arc<AtomicUsize>,
    errors: Arc<AtomicUsize>,
}

impl Seen {
    fn new() -> Self {
        Seen {
            items: Arc::new(Mutex::new(Vec::new())),
            completes: Arc::new(AtomicUsize::new(0)),
            errors: Arc::new(AtomicUsize::new(0)),
        }
    }
    fn items(&self) -> Vec<u64> {
        self.items.lock().clone()
    }
}

/// Requests `request` in `on_subscribe`; cancels from inside its first `on_next` if asked.
struct Recorder {
    seen: Seen,
    request: u64,
    cancel_first: bool,
    subscription: Option<SubscriptionRef>,
    _token: StdArc<()>,
}

impl Recorder {
    fn new(request: u64, cancel_first: bool) -> (Self, Seen, Weak<()>) {
        let seen = Seen::new();
        let token = StdArc::new(());
        let weak = StdArc::downgrade(&token);
        (
            Recorder {
                seen: seen.clone(),
                request,
                cancel_first,
                subscription: None,
                _token: token,
            },
            seen,
            weak,
        )
    }
}

impl Subscriber<u64> for Recorder {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(self.request);
        self.subscription = Some(s);
    }
    fn on_next(&mut self, x: u64) {
        self.seen.items.lock().push(x);
        if self.cancel_first {
            if let Some(s) = self.subscription.take() {
                s.cancel();
            }
        }
    }
    fn on_error(&mut self, _: Error) {
        self.subscription = None;
        self.seen.errors.fetch_add(1, Ordering::AcqRel);
    }
    fn on_complete(&mut self) {
        self.subscription = None;
        self.seen.completes.fetch_add(1, Ordering::AcqRel);
    }
}

/// Two lanes of one subscriber each: `keys[i]` is element `i`'s key.
fn two_lanes(
    keys: Vec<u64>,
    subscribers: Vec<BoxSubscriber<u64>>,
    live: &Arc<AtomicUsize>,
) -> Vec<Island> {
    let made = live.clone();
    let n = keys.len() as u64;
    Flow::from_iter(0..n)
        .map(move |x| Tracked::new(x, keys[x as usize], &made))
        .into_lane_islands(
            LanesConfig::new(2).capacity(1),
            |t: &Tracked| t.1,
            |lane| lane.map(|t: Tracked| t.0),
            subscribers,
        )
        .ok()
        .expect("three islands")
}

/// Runs the upstream island (the first) on a thread of the model, the others together on
/// this one.
fn run(mut islands: Vec<Island>) {
    for island in &mut islands {
        island.start();
    }
    let mut rest = islands.split_off(1);
    let upstream = islands.pop().expect("the upstream island");
    let a = thread::spawn(move || loom::future::block_on(upstream));
    let last = rest.pop().expect("an island");
    match rest.pop() {
        Some(first) => {
            loom::future::block_on(futures::future::join(first, last));
        }
        None => loom::future::block_on(last),
    }
    a.join().unwrap();
}

/// Head-of-line backpressure, no loss, no lost wake-up. Three elements, all keyed to lane 0,
/// through a ring of 2 (granted when the lane's island first runs, then one slot per element
/// taken): the dispatcher finds the lane without room and holds the element, which races the
/// lane's grant (before the dispatcher's island registered, between its look and its park,
/// after). In every interleaving lane 0 gets 0, 1, 2 in order, both lanes complete, nothing
/// leaks.
pub(crate) fn full_lane_races_next_element() {
    let live = Arc::new(AtomicUsize::new(0));
    let k0 = key_for(0);
    let (s0, seen0, _) = Recorder::new(3, false);
    let (s1, seen1, _) = Recorder::new(3, false);
    let islands = two_lanes(vec![k0; 3], vec![Box::new(s0), Box::new(s1)], &live);
    run(islands);
    assert_eq!(seen0.items(), vec![0, 1, 2], "lost: lane 0's elements");
    assert!(seen1.items().is_empty());
    assert_eq!(
        seen0.completes.load(Ordering::Acquire),
        1,
        "lane 0 did not complete"
    );
    assert_eq!(
        seen1.completes.load(Ordering::Acquire),
        1,
        "lane 1 did not complete"
    );
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// Rules 3.13, 1.8 (eventually), no leak. Elements 0 and 1 to lane 0, 2 to lane 1; each
/// lane's subscriber cancels from inside its first `on_next`, racing the dispatcher's flushes
/// into the rings and the lanes' own draining: in every interleaving all three islands end
/// (the cancels reached the upstream, or it completed first), at most the requested elements
/// arrived, both subscribers were dropped, and every element made was dropped exactly once —
/// in a lane's ring, in the dispatcher's unflushed batch, held for a full lane, or published
/// after the lane left.
pub(crate) fn cancel_races_lane_drain() {
    let live = Arc::new(AtomicUsize::new(0));
    let (k0, k1) = (key_for(0), key_for(1));
    let (s0, seen0, t0) = Recorder::new(3, true);
    let (s1, seen1, t1) = Recorder::new(3, true);
    let islands = two_lanes(vec![k0, k0, k1], vec![Box::new(s0), Box::new(s1)], &live);
    run(islands);
    assert!(
        seen0.items().len() <= 2 && seen1.items().len() <= 1,
        "rule 1.1"
    );
    assert_eq!(seen0.errors.load(Ordering::Acquire), 0);
    assert_eq!(seen1.errors.load(Ordering::Acquire), 0);
    assert!(
        t0.upgrade().is_none() && t1.upgrade().is_none(),
        "rule 3.13: a subscriber is kept"
    );
    assert_eq!(
        live.load(Ordering::Acquire),
        0,
        "leaked: an element was never dropped"
    );
}

/// Rules 1.5, 1.7: merged lanes complete after the last lane drained. Elements 0 and 2 to
/// lane 0, 1 to lane 1, lanes of 2 and rings of 2 into the merging island; the upstream and
/// both lanes run on one thread, the merging island on the other, so each lane's completion
/// races the merge's draining of the other. In every interleaving all three elements and
/// then one completion arrive, and nothing leaks.
pub(crate) fn completion_after_last_lane_drains() {
    let live = Arc::new(AtomicUsize::new(0));
    let (k0, k1) = (key_for(0), key_for(1));
    let keys = [k0, k1, k0];
    let made = live.clone();
    let (s, seen, _) = Recorder::new(3, false);
    let mut islands = Flow::from_iter(0..3u64)
        .map(move |x| Tracked::new(x, keys[x as usize], &made))
        .lanes_with(
            LanesConfig::new(2).capacity(1).output(1),
            |t: &Tracked| t.1,
            |lane| lane.map(|t: Tracked| t.0),
        )
        .into_islands(Box::new(s))
        .expect("four islands");
    assert_eq!(islands.len(), 4);
    for island in &mut islands {
        island.start();
    }
    let merging = islands.pop().expect("the merging island");
    let lane1 = islands.pop().expect("lane 1");
    let lane0 = islands.pop().expect("lane 0");
    let upstream = islands.pop().expect("the upstream island");
    let a = thread::spawn(move || {
        loom::future::block_on(futures::future::join3(upstream, lane0, lane1));
    });
    loom::future::block_on(merging);
    a.join().unwrap();
    let mut items = seen.items();
    items.sort_unstable();
    assert_eq!(items, vec![0, 1, 2], "elements lost before the completion");
    assert_eq!(seen.completes.load(Ordering::Acquire), 1, "no completion");
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// Runs a lanes model with one preemption: three or four islands (each with its mailbox,
/// rings and atomics) on two threads make a search that takes minutes at the suite's bound of
/// 2 on the 2-core machine; with one preemption each model takes seconds and still reaches
/// every race named above (each twin's bug shows with one preemption or none).
pub(crate) fn bounded<F>(model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(1);
    builder.check(model);
}

#[test]
fn lanes_full_lane_races_next_element() {
    bounded(full_lane_races_next_element);
}

#[test]
fn lanes_cancel_races_lane_drain() {
    bounded(cancel_races_lane_drain);
}

#[test]
fn lanes_completion_after_last_lane_drains() {
    bounded(completion_after_last_lane_drains);
}

crate::loom_rejects!(lanes_model_rejects_a_full_lane_that_drops, "lost", || {
    rs_impl::loom::inject(rs_impl::loom::Fault::LaneFullDrops);
    bounded(full_lane_races_next_element)
});

crate::loom_rejects!(
    lanes_model_rejects_a_cancel_that_forgets_a_lanes_buffer,
    "leaked",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::CancelForgetsBuffer);
        bounded(cancel_races_lane_drain)
    }
);

crate::loom_rejects!(
    lanes_model_rejects_a_completion_on_the_first_lane,
    "elements lost before the completion",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::LanesCompleteOnFirstLane);
        bounded(completion_after_last_lane_drains)
    }
);
