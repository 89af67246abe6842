//! Keyed lanes (`Flow::lanes`, `Flow::subscribe_lanes`): per-key order and no loss under
//! random keys and lane speeds, the `groupBy` deadlock shape, head-of-line backpressure with
//! each lane's depth, broadcast elements, a lane's failure, cancel from downstream, an
//! upstream error, one lane inline, a lane flow that ignores its input.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use rs_api::{Error, Publisher};
use rs_impl::flow::Flow;
use rs_impl::island::{BuildError, Runtime};
use rs_impl::lanes::{lane_of, LaneDepths, LaneKey, LanesConfig, LanesError};
use rs_impl::subscriber::{collect, RequestStrategy};

use support::{quiet_deliberate_panics, wait_until};

/// An element that counts its live values (clones included).
#[derive(Debug)]
struct Tracked {
    key: u32,
    seq: u64,
    live: Arc<AtomicI64>,
}

impl Tracked {
    fn new(key: u32, seq: u64, live: &Arc<AtomicI64>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Tracked {
            key,
            seq,
            live: live.clone(),
        }
    }
}

impl Clone for Tracked {
    fn clone(&self) -> Self {
        Tracked::new(self.key, self.seq, &self.live)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A source iterator of `(key, seq)` pairs (keys from a xorshift generator over `keys`
/// distinct values) that counts what was pulled and says when it was dropped (the upstream
/// cancelled or ended).
#[derive(Clone)]
struct Keyed {
    seq: u64,
    total: u64,
    keys: u32,
    rng: u64,
    pulled: Arc<AtomicU64>,
    dropped: Arc<AtomicBool>,
    live: Arc<AtomicI64>,
}

impl Keyed {
    fn new(total: u64, keys: u32, seed: u64) -> Self {
        Keyed {
            seq: 0,
            total,
            keys,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            pulled: Arc::new(AtomicU64::new(0)),
            dropped: Arc::new(AtomicBool::new(false)),
            live: Arc::new(AtomicI64::new(0)),
        }
    }
}

impl Iterator for Keyed {
    type Item = Tracked;
    fn next(&mut self) -> Option<Tracked> {
        if self.seq == self.total {
            return None;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let key = (self.rng % u64::from(self.keys)) as u32;
        let t = Tracked::new(key, self.seq, &self.live);
        self.seq += 1;
        self.pulled.fetch_add(1, Ordering::SeqCst);
        Some(t)
    }
}

/// Only the clone that is iterated counts as the upstream: the blueprint's own copy is never
/// iterated.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `Keyed`, flagged when the materialised (iterated) copy is dropped.
#[derive(Clone)]
struct Upstream(Keyed);

impl IntoIterator for Upstream {
    type Item = Tracked;
    type IntoIter = Flagged;
    fn into_iter(self) -> Flagged {
        let flag = DropFlag(self.0.dropped.clone());
        Flagged(self.0, flag)
    }
}

struct Flagged(Keyed, #[allow(dead_code)] DropFlag);

impl Iterator for Flagged {
    type Item = Tracked;
    fn next(&mut self) -> Option<Tracked> {
        self.0.next()
    }
}

/// Busy work, deterministic (no timing): `rounds` rounds of a xorshift.
fn spin(rounds: u32) -> u64 {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

fn runtime() -> Runtime {
    Runtime::with_threads(4).unwrap()
}

/// Every element arrived once, each key's elements in upstream order.
fn check_per_key_order(got: &[(u32, u64)], total: u64) {
    assert_eq!(got.len() as u64, total, "an element was lost or duplicated");
    let mut last: HashMap<u32, u64> = HashMap::new();
    for &(key, seq) in got {
        if let Some(prev) = last.insert(key, seq) {
            assert!(prev < seq, "key {key}: {seq} after {prev}");
        }
    }
    let mut seqs: Vec<u64> = got.iter().map(|&(_, s)| s).collect();
    seqs.sort_unstable();
    assert!(seqs.iter().copied().eq(0..total), "not every element once");
}

/// Per-key order and no loss, merged: random keys, lanes of different speeds (the lane of
/// key 0 far slower than the rest), small lanes so that backpressure works all the time.
#[test]
fn merged_lanes_keep_each_keys_order_and_lose_nothing() {
    let rt = runtime();
    for (seed, lanes, capacity) in [(1u64, 2usize, 4usize), (2, 3, 16), (3, 8, 8), (4, 5, 4096)] {
        let total = 20_000;
        let up = Keyed::new(total, 64, seed);
        let live = up.live.clone();
        let slow_lane = lane_of(0u32.lane_hash(), lanes);
        let p = Flow::from_iter(Upstream(up))
            .lanes_with(
                LanesConfig::new(lanes).capacity(capacity).output(8),
                |t: &Tracked| t.key,
                move |lane| {
                    lane.map(move |t: Tracked| {
                        let mine = lane_of(t.key.lane_hash(), lanes);
                        spin(if mine == slow_lane {
                            4000
                        } else {
                            (t.key % 7) * 50
                        });
                        (t.key, t.seq)
                    })
                },
            )
            .into_publisher(&rt);
        let (s, h) = collect(RequestStrategy::Prefetch(32));
        p.subscribe(Box::new(s));
        let got = h.wait().unwrap();
        check_per_key_order(&got, total);
        wait_until("every element dropped", || live.load(Ordering::SeqCst) == 0);
    }
}

/// The same with one subscriber per lane: each lane sees exactly the keys hashed to it.
#[test]
fn per_lane_subscribers_see_their_keys_in_order() {
    let rt = runtime();
    for (seed, lanes) in [(5u64, 2usize), (6, 4), (7, 7)] {
        let total = 10_000;
        let up = Keyed::new(total, 100, seed);
        let mut handles = Vec::new();
        let mut subs: Vec<rs_api::BoxSubscriber<(u32, u64)>> = Vec::new();
        for i in 0..lanes {
            // The subscriber of lane 1 is slow to ask for more.
            let strategy = if i == 1 {
                RequestStrategy::OneByOne
            } else {
                RequestStrategy::Prefetch(16)
            };
            let (s, h) = collect(strategy);
            subs.push(Box::new(s));
            handles.push(h);
        }
        Flow::from_iter(Upstream(up))
            .subscribe_lanes(
                &rt,
                LanesConfig::new(lanes).capacity(8),
                |t: &Tracked| t.key,
                |lane| lane.map(|t: Tracked| (t.key, t.seq)),
                subs,
            )
            .unwrap();
        let mut all = Vec::new();
        for (i, h) in handles.into_iter().enumerate() {
            let got = h.wait().unwrap();
            for &(key, _) in &got {
                assert_eq!(lane_of(key.lane_hash(), lanes), i, "key {key} on lane {i}");
            }
            all.extend(got);
        }
        all.sort_by_key(|&(_, s)| s);
        check_per_key_order(&all, total);
    }
}

/// The `groupBy` deadlock shape (RxJava #6284, Reactor #596): far more distinct keys than
/// any buffer holds (every element its own key), lanes of 4, one lane much slower than the
/// others, a subscriber that requests 8 at a time. Fixed lanes all attached before the first
/// element: it completes, with every element.
#[test]
fn the_group_by_deadlock_shape_completes() {
    let rt = runtime();
    let total = 50_000u64;
    let p = Flow::from_iter(0..total)
        .lanes_with(
            LanesConfig::new(4).capacity(4).output(4),
            |x: &u64| *x,
            |lane| {
                lane.map(|x: u64| {
                    if lane_of(x.lane_hash(), 4) == 0 {
                        spin(2000);
                    }
                    x
                })
            },
        )
        .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Prefetch(8));
    p.subscribe(Box::new(s));
    let mut got = h.wait().unwrap();
    got.sort_unstable();
    assert!(got.into_iter().eq(0..total));
}

/// A full lane stops the upstream (head-of-line blocking): with one lane stuck, the upstream
/// is pulled no further than the stuck lane's ring, the element waiting for it, and the
/// elements that went to the other lane meanwhile; the stuck lane's depth shows its ring
/// full. Released, everything arrives.
#[test]
fn a_full_lane_stops_the_upstream_and_its_depth_shows_it() {
    let rt = runtime();
    let total = 100_000u64;
    let up = Keyed::new(total, 1_000, 11);
    let pulled = up.pulled.clone();
    let gate = Arc::new(AtomicBool::new(false));
    let depths = LaneDepths::new();
    let stuck_lane = lane_of(0u32.lane_hash(), 2);
    let g = gate.clone();
    let p = Flow::from_iter(Upstream(up))
        .lanes_with(
            LanesConfig::new(2).capacity(16).depths(&depths),
            |t: &Tracked| t.key,
            move |lane| {
                let g = g.clone();
                lane.map(move |t: Tracked| {
                    if lane_of(t.key.lane_hash(), 2) == stuck_lane {
                        while !g.load(Ordering::SeqCst) {
                            std::thread::yield_now();
                        }
                    }
                    t.seq
                })
            },
        )
        .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    wait_until("the stuck lane's ring is full", || {
        depths.depths().get(stuck_lane).copied() == Some(16)
    });
    let before = pulled.load(Ordering::SeqCst);
    for _ in 0..200 {
        std::thread::yield_now();
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    let after = pulled.load(Ordering::SeqCst);
    assert_eq!(before, after, "the upstream went on with a full lane");
    // 16 in the stuck lane's ring, 1 in its map, 1 waiting, 1 read ahead, and what went to the
    // free lane meanwhile (keys split about evenly: the same order of magnitude).
    assert!(after < 200, "pulled {after} of {total} with a full lane");
    assert!(depths.depths().iter().all(|d| *d <= 16));
    gate.store(true, Ordering::SeqCst);
    let mut got = h.wait().unwrap();
    got.sort_unstable();
    assert!(got.into_iter().eq(0..total));
}

/// Broadcast elements reach every lane, each at its place in that lane's order; the others
/// are keyed as usual.
#[test]
fn broadcast_elements_reach_every_lane_in_order() {
    let rt = runtime();
    let lanes = 4;
    let live = Arc::new(AtomicI64::new(0));
    let l = live.clone();
    let mut handles = Vec::new();
    let mut subs: Vec<rs_api::BoxSubscriber<u64>> = Vec::new();
    for _ in 0..lanes {
        let (s, h) = collect(RequestStrategy::Prefetch(4));
        subs.push(Box::new(s));
        handles.push(h);
    }
    Flow::from_iter(0u64..1_000)
        .map(move |x| Tracked::new((x % 13) as u32, x, &l))
        .subscribe_lanes(
            &rt,
            LanesConfig::new(lanes)
                .capacity(2)
                .broadcast(|t: &Tracked| t.seq % 100 == 0),
            |t: &Tracked| t.key,
            |lane| lane.map(|t: Tracked| t.seq),
            subs,
        )
        .unwrap();
    let mut keyed = 0;
    for h in handles {
        let got = h.wait().unwrap();
        assert!(got.windows(2).all(|w| w[0] < w[1]), "a lane out of order");
        let markers: Vec<u64> = got.iter().copied().filter(|x| x % 100 == 0).collect();
        assert_eq!(markers, (0..10).map(|k| k * 100).collect::<Vec<_>>());
        keyed += got.len() - markers.len();
    }
    assert_eq!(keyed, 990);
    wait_until("every copy dropped", || live.load(Ordering::SeqCst) == 0);
}

/// A lane that fails fails the stream with an error naming it; the upstream is cancelled
/// (its iterator dropped before the end) and every element is dropped.
#[test]
fn a_failing_lane_fails_the_stream_naming_the_lane() {
    quiet_deliberate_panics();
    let rt = runtime();
    let total = 1_000_000;
    let up = Keyed::new(total, 50, 21);
    let (live, dropped, pulled) = (up.live.clone(), up.dropped.clone(), up.pulled.clone());
    let p = Flow::from_iter(Upstream(up))
        .lanes(
            4,
            |t: &Tracked| t.key,
            |lane| {
                lane.map(|t: Tracked| {
                    if t.seq == 5_000 {
                        panic!("deliberate: lane failure at {}", t.seq);
                    }
                    t.seq
                })
            },
        )
        .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    let e = h.wait().unwrap_err();
    let Some(LanesError::LaneFailed { lane, lanes, error }) = e.downcast_ref::<LanesError>() else {
        panic!("not a lane failure: {e}");
    };
    assert_eq!(*lanes, 4);
    assert!(error.to_string().contains("deliberate"), "{error}");
    assert!(
        e.to_string()
            .starts_with(&format!("lane {lane} of 4 failed")),
        "{e}"
    );
    wait_until("the upstream cancelled", || dropped.load(Ordering::SeqCst));
    assert!(pulled.load(Ordering::SeqCst) < total);
    wait_until("every element dropped", || live.load(Ordering::SeqCst) == 0);
}

/// With one subscriber per lane, a failing lane fails every other lane's subscriber with the
/// same error naming it, and cancels the upstream.
#[test]
fn a_failing_lane_fails_the_other_lanes_subscribers() {
    quiet_deliberate_panics();
    let rt = runtime();
    let up = Keyed::new(u64::MAX, 50, 22);
    let (live, dropped) = (up.live.clone(), up.dropped.clone());
    let mut handles = Vec::new();
    let mut subs: Vec<rs_api::BoxSubscriber<u64>> = Vec::new();
    for _ in 0..3 {
        let (s, h) = collect(RequestStrategy::Prefetch(8));
        subs.push(Box::new(s));
        handles.push(h);
    }
    Flow::from_iter(Upstream(up))
        .subscribe_lanes(
            &rt,
            LanesConfig::new(3),
            |t: &Tracked| t.key,
            |lane| {
                lane.map(|t: Tracked| {
                    if t.seq == 1_000 {
                        panic!("deliberate: lane failure");
                    }
                    t.seq
                })
            },
            subs,
        )
        .unwrap();
    let mut named = Vec::new();
    for h in handles {
        let e = h.wait().unwrap_err();
        match e.downcast_ref::<LanesError>() {
            Some(LanesError::LaneFailed { lane, .. }) => named.push(*lane),
            _ => panic!("not a lane failure: {e}"),
        }
    }
    assert!(
        named.windows(2).all(|w| w[0] == w[1]),
        "lanes named: {named:?}"
    );
    wait_until("the upstream cancelled", || dropped.load(Ordering::SeqCst));
    wait_until("every element dropped", || live.load(Ordering::SeqCst) == 0);
}

/// Downstream's cancel (here: `take` done after 100) reaches every lane and the upstream of
/// an endless stream; nothing leaks.
#[test]
fn a_downstream_cancel_reaches_every_lane_and_the_upstream() {
    let rt = runtime();
    let up = Keyed::new(u64::MAX, 1_000, 31);
    let (live, dropped) = (up.live.clone(), up.dropped.clone());
    let p = Flow::from_iter(Upstream(up))
        .lanes(8, |t: &Tracked| t.key, |lane| lane.map(|t: Tracked| t.seq))
        .take(100)
        .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Prefetch(16));
    p.subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap().len(), 100);
    wait_until("the upstream cancelled", || dropped.load(Ordering::SeqCst));
    wait_until("every element dropped", || live.load(Ordering::SeqCst) == 0);
}

/// With one subscriber per lane, a lane that cancels is dropped from the stream (the others
/// complete); once every lane cancelled, the upstream is cancelled.
#[test]
fn per_lane_cancels_drop_that_lane_then_the_upstream() {
    let rt = runtime();
    // One lane cancels at once, the others take everything.
    let up = Keyed::new(10_000, 64, 41);
    let live = up.live.clone();
    let (s0, h0) = collect::<u64>(RequestStrategy::Prefetch(4));
    let (s1, h1) = collect::<u64>(RequestStrategy::Prefetch(4));
    h0.cancel();
    Flow::from_iter(Upstream(up))
        .subscribe_lanes(
            &rt,
            LanesConfig::new(2).capacity(8),
            |t: &Tracked| t.key,
            |lane| lane.map(|t: Tracked| t.seq),
            vec![Box::new(s0), Box::new(s1)],
        )
        .unwrap();
    let _ = h0.wait();
    let got = h1.wait().unwrap();
    assert!(!got.is_empty() && got.windows(2).all(|w| w[0] < w[1]));
    wait_until("every element dropped", || live.load(Ordering::SeqCst) == 0);

    // Every lane cancels: the endless upstream is cancelled.
    let up = Keyed::new(u64::MAX, 64, 42);
    let (live, dropped) = (up.live.clone(), up.dropped.clone());
    let (s0, h0) = collect::<u64>(RequestStrategy::Prefetch(4));
    let (s1, h1) = collect::<u64>(RequestStrategy::Prefetch(4));
    Flow::from_iter(Upstream(up))
        .subscribe_lanes(
            &rt,
            LanesConfig::new(2).capacity(8),
            |t: &Tracked| t.key,
            |lane| lane.map(|t: Tracked| t.seq),
            vec![Box::new(s0), Box::new(s1)],
        )
        .unwrap();
    h0.cancel();
    h1.cancel();
    wait_until("the upstream cancelled", || dropped.load(Ordering::SeqCst));
    wait_until("every element dropped", || live.load(Ordering::SeqCst) == 0);
}

/// An upstream error reaches the output as it is (not as a lane failure), after the elements
/// before it.
#[test]
fn an_upstream_error_passes_through_every_lane() {
    let rt = runtime();
    let p = Flow::from_try_stream(|| {
        futures::stream::iter((0..100u32).map(Ok).chain([Err(Error::msg("gone"))]))
    })
    .lanes(3, |x: &u32| *x, |lane| lane.map(|x| x + 1))
    .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    let e = h.wait().unwrap_err();
    assert_eq!(e.to_string(), "gone");
    assert!(!e.is::<LanesError>());
}

/// One lane: the lane flow runs inline, on one island, as if `lanes` were not there.
#[test]
fn one_lane_is_the_flow_itself() {
    let plain = Flow::from_iter(0u64..1000).map(|x| x * 2);
    let laned = Flow::from_iter(0u64..1000).lanes(1, |x: &u64| *x, |l| l.map(|x| x * 2));
    assert_eq!(plain.islands(), 1);
    assert_eq!(laned.islands(), 1);
    let (s, h) = collect(RequestStrategy::Unbounded);
    let island = laned.into_island(Box::new(s)).unwrap();
    futures::executor::block_on(island);
    assert_eq!(
        h.wait().unwrap(),
        (0..1000).map(|x| x * 2).collect::<Vec<_>>()
    );
    // More lanes: the upstream's island, one per lane, and the merging island.
    let four = Flow::from_iter(0u64..10).lanes(4, |x: &u64| *x, |l| l.map(|x| x + 1));
    assert_eq!(four.islands(), 1 + 4 + 1);
}

/// A lane flow that does not read its input is a build error naming the lane.
#[test]
fn a_lane_flow_that_ignores_its_input_is_refused() {
    let rt = runtime();
    let p = Flow::from_iter(0u32..10)
        .lanes(2, |x: &u32| *x, |_lane| Flow::from_iter(0u32..3))
        .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    let e = h.wait().unwrap_err();
    assert_eq!(
        e.downcast_ref::<BuildError>(),
        Some(&BuildError::LaneInputUnused { lane: 0 })
    );
    assert_eq!(
        Flow::from_iter(0u32..1)
            .subscribe_lanes(
                &rt,
                LanesConfig::new(1),
                |x: &u32| *x,
                |l| l,
                Vec::<rs_api::BoxSubscriber<u32>>::new()
            )
            .unwrap_err()
            .to_string(),
        LanesError::NoLanes.to_string()
    );
}

/// Every subscription runs its own lanes (cold), and lanes nest.
#[test]
fn lanes_are_cold_and_nest() {
    let rt = runtime();
    let p = Flow::from_iter(0u32..5_000)
        .lanes(
            3,
            |x: &u32| *x % 10,
            |lane| lane.lanes(2, |x: &u32| *x, |inner| inner.map(|x| x + 1)),
        )
        .into_publisher(&rt);
    for _ in 0..3 {
        let (s, h) = collect(RequestStrategy::Prefetch(64));
        p.subscribe(Box::new(s));
        let mut got = h.wait().unwrap();
        got.sort_unstable();
        assert!(got.into_iter().eq(1..5_001));
    }
}
