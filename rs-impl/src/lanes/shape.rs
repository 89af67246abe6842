//! The blueprint types of keyed lanes ([`LaneIn`], [`LanesShape`]) and the `Flow` methods
//! that make them.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{BoxSubscriber, Error};

use super::dispatch::{Control, Dispatch};
use super::join::{JoinEntry, LaneExit};
use super::key::LaneKey;
use super::{LanesConfig, LanesError};
use crate::boundary::{Producer, Shared};
use crate::flow::{Build, Exit, Flow, RingEntry, RingExit, RingIn, RingOut, Shape, SubscriberExit};
use crate::island::{BuildError, Island, IslandError, Runtime};
use crate::loom::sync::{Arc, Mutex};
use crate::panics as report;

/// The source of a lane flow: the elements keyed to this lane (its ring, in the lane's own
/// island), or — with one lane — the upstream flow itself, inline.
pub struct LaneIn<S> {
    /// `Some`: one lane, the upstream placed inline; `None`: the lane's ring.
    upstream: Option<S>,
}

impl<S: Clone> Clone for LaneIn<S> {
    fn clone(&self) -> Self {
        LaneIn {
            upstream: self.upstream.clone(),
        }
    }
}

impl<S> fmt::Debug for LaneIn<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaneIn")
            .field("inline", &self.upstream.is_some())
            .finish()
    }
}

impl<S: Shape> Shape for LaneIn<S> {
    type Out = S::Out;

    fn place<X: Exit<S::Out> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        if let Some(s) = &self.upstream {
            return s.place(b, exit);
        }
        let ring = b
            .lane_input
            .take()
            .and_then(|input| input.downcast::<RingIn<S::Out>>().ok())
            .ok_or(BuildError::LaneInputUnused { lane: usize::MAX })?;
        b.segment(RingEntry::new(*ring), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        self.upstream.as_ref().map_or(1, |s| s.islands())
    }
}

/// Keyed lanes split out of one upstream ([`Flow::lanes`]).
struct Split<S: Shape, L, F> {
    upstream: S,
    lanes: Vec<L>,
    key: StdArc<F>,
    config: LanesConfig<S::Out>,
}

impl<S, L, F, Q> Split<S, L, F>
where
    S: Shape,
    L: Shape,
    F: Fn(&S::Out) -> Q + Send + Sync + 'static,
    Q: LaneKey + 'static,
{
    /// Places the upstream ending in the dispatcher, then each lane on its own island ending
    /// in `lane_exit(i)` (the last lane's island is left open when `close_last` is false).
    fn place_lanes<E, M>(
        &self,
        b: &mut Build,
        mut lane_exit: M,
        close_last: bool,
    ) -> Result<Arc<Control>, BuildError>
    where
        E: Exit<L::Out> + 'static,
        M: FnMut(usize) -> E,
    {
        let n = self.lanes.len();
        let control = Control::new(n);
        let mut rings = Vec::with_capacity(n);
        let mut writers = Vec::with_capacity(n);
        for _ in 0..n {
            let shared = Shared::<S::Out>::new(self.config.capacity);
            {
                let mut c = shared.control();
                shared.claim(Producer::Internal, &mut c);
            }
            shared.claim_consumer();
            writers.push(RingOut::new(shared.clone(), (shared.size() / 2).max(1)));
            rings.push(shared);
        }
        if let Some(d) = &self.config.depths {
            d.attach(
                rings
                    .iter()
                    .map(|r| {
                        StdArc::new(super::RingDepth(r.ring.clone())) as StdArc<dyn super::Depth>
                    })
                    .collect(),
            );
        }
        let dispatch = Dispatch::new(
            writers,
            self.key.clone(),
            self.config.broadcast.clone(),
            control.clone(),
        );
        self.upstream.place(b, dispatch)?;
        b.end_island()?;
        for (i, (lane, shared)) in self.lanes.iter().zip(rings).enumerate() {
            b.lane_input = Some(Box::new(RingIn::new(shared, None)));
            let exit = LaneExit::new(i, lane_exit(i), control.clone());
            match lane.place(b, exit) {
                Err(BuildError::LaneInputUnused { .. }) => {
                    return Err(BuildError::LaneInputUnused { lane: i })
                }
                r => r?,
            }
            if b.lane_input.take().is_some() {
                return Err(BuildError::LaneInputUnused { lane: i });
            }
            if close_last || i + 1 < n {
                b.end_island()?;
            }
        }
        Ok(control)
    }
}

enum Kind<S: Shape, L, F> {
    /// One lane: the lane flow over the upstream, inline.
    Inline(L),
    Split(StdArc<Split<S, L, F>>),
}

/// The blueprint of [`Flow::lanes`]: with one lane, the lane flow applied inline (no lane
/// machinery); with more, the upstream island's dispatcher, one island per lane, and the
/// merging island.
pub struct LanesShape<S: Shape, L, F> {
    kind: Kind<S, L, F>,
}

impl<S: Shape, L: Clone, F> Clone for LanesShape<S, L, F> {
    fn clone(&self) -> Self {
        LanesShape {
            kind: match &self.kind {
                Kind::Inline(l) => Kind::Inline(l.clone()),
                Kind::Split(s) => Kind::Split(s.clone()),
            },
        }
    }
}

impl<S: Shape, L, F> fmt::Debug for LanesShape<S, L, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lanes = match &self.kind {
            Kind::Inline(_) => 1,
            Kind::Split(s) => s.lanes.len(),
        };
        f.debug_struct("LanesShape").field("lanes", &lanes).finish()
    }
}

impl<S, L, F, Q> Shape for LanesShape<S, L, F>
where
    S: Shape,
    L: Shape,
    F: Fn(&S::Out) -> Q + Send + Sync + 'static,
    Q: LaneKey + 'static,
{
    type Out = L::Out;

    fn place<X: Exit<L::Out> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let split = match &self.kind {
            Kind::Inline(l) => return l.place(b, exit),
            Kind::Split(s) => s,
        };
        let size = split.config.output;
        let mut outs = Vec::with_capacity(split.lanes.len());
        let control = split.place_lanes(
            b,
            |_| {
                let shared = Shared::<L::Out>::new(size);
                {
                    let mut c = shared.control();
                    shared.claim(Producer::Internal, &mut c);
                }
                shared.claim_consumer();
                outs.push(shared.clone());
                RingExit(RingOut::new(shared.clone(), (shared.size() / 2).max(1)))
            },
            true,
        )?;
        let rings = outs.into_iter().map(|s| RingIn::new(s, None)).collect();
        b.segment(JoinEntry::new(rings, control), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        match &self.kind {
            Kind::Inline(l) => l.islands(),
            Kind::Split(s) => {
                s.upstream.islands() + s.lanes.iter().map(Shape::islands).sum::<usize>() + 1
            }
        }
    }
}

/// Builds the lane flows: `lane` once per lane, over a lane's input.
fn lane_flows<S: Shape, L, G>(n: usize, lane: &G) -> Vec<L>
where
    G: Fn(Flow<LaneIn<S>>) -> Flow<L>,
{
    (0..n)
        .map(|_| {
            let (l, _) = lane(Flow::from_shape(LaneIn { upstream: None })).into_parts();
            l
        })
        .collect()
}

impl<S: Shape> Flow<S> {
    /// Splits the stream into `n` keyed lanes, runs the flow `lane` builds on each (each lane
    /// its own island), and merges the lanes' outputs back into one stream, in the order they
    /// arrive. `key` picks each element's lane: `lane_of(key(x).lane_hash(), n)` (Kafka's
    /// `murmur2` over the key's bytes, see [`LaneKey`]), so all elements of one key go
    /// through one lane, in their order; no order is promised across keys. With the default
    /// [`LanesConfig`]: 4096 elements per lane, no broadcast.
    ///
    /// With `n = 1` the flow `lane` builds runs inline, on the upstream's island: no queue,
    /// no island, no allocation (the flow is the one you would write without `lanes`).
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(2).unwrap();
    /// // (user, amount): each user's amounts stay in order.
    /// let p = Flow::from_iter((0..1000u32).map(|i| (i % 7, i)))
    ///     .lanes(4, |&(user, _)| user, |lane| lane.map(|(user, amount)| (user, amount * 2)))
    ///     .into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Prefetch(64));
    /// p.subscribe(Box::new(s));
    /// let got = h.wait().unwrap();
    /// assert_eq!(got.len(), 1000);
    /// let user3: Vec<u32> = got.iter().filter(|(u, _)| *u == 3).map(|(_, a)| *a).collect();
    /// assert!(user3.windows(2).all(|w| w[0] < w[1]));
    /// ```
    #[track_caller]
    pub fn lanes<F, Q, L, G>(self, n: usize, key: F, lane: G) -> Flow<LanesShape<S, L, F>>
    where
        F: Fn(&S::Out) -> Q + Send + Sync + 'static,
        Q: LaneKey + 'static,
        L: Shape,
        G: Fn(Flow<LaneIn<S>>) -> Flow<L>,
    {
        self.lanes_with(LanesConfig::new(n), key, lane)
    }

    /// [`lanes`](Flow::lanes) set up with `config`: the lane count, each lane's capacity, the
    /// broadcast predicate, a depth handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, lanes::LanesConfig, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(2).unwrap();
    /// // Element 0 is a "flush" marker every lane must see.
    /// let config = LanesConfig::new(3).capacity(64).broadcast(|x: &u64| *x == 0);
    /// let p = Flow::from_iter(0u64..100)
    ///     .lanes_with(config, |x| *x, |lane| lane.filter(|x| *x == 0))
    ///     .into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![0, 0, 0]); // one copy per lane
    /// ```
    pub fn lanes_with<F, Q, L, G>(
        self,
        config: LanesConfig<S::Out>,
        key: F,
        lane: G,
    ) -> Flow<LanesShape<S, L, F>>
    where
        F: Fn(&S::Out) -> Q + Send + Sync + 'static,
        Q: LaneKey + 'static,
        L: Shape,
        G: Fn(Flow<LaneIn<S>>) -> Flow<L>,
    {
        let n = config.lanes;
        let budget = self.budget();
        if n == 1 {
            let (upstream, _) = self.into_parts();
            let (l, _) = lane(Flow::from_shape(LaneIn {
                upstream: Some(upstream),
            }))
            .into_parts();
            return Flow::from_shape(LanesShape {
                kind: Kind::Inline(l),
            })
            .with_budget(budget);
        }
        let lanes = lane_flows(n, &lane);
        self.with_shape(|upstream| LanesShape {
            kind: Kind::Split(StdArc::new(Split {
                upstream,
                lanes,
                key: StdArc::new(key),
                config,
            })),
        })
    }

    /// Materialises keyed lanes that end each in a subscriber of its own: one lane per
    /// subscriber (`subscribers.len()` lanes), lane `i` runs the flow `lane` builds and
    /// serves `subscribers[i]`. Every lane is attached before the first element moves. The
    /// islands are in flow order: the upstream's, then each lane's. With one subscriber, the
    /// lane flow runs inline on the upstream's island.
    ///
    /// A lane whose subscriber cancels is dropped from the stream (its elements are dropped);
    /// once every lane cancelled, the upstream is cancelled. A lane that fails fails every
    /// other lane's subscriber with [`LanesError::LaneFailed`] naming it.
    ///
    /// # Errors
    ///
    /// [`LanesError::NoLanes`] for no subscriber; a build error (the subscribers are
    /// given back, unsignalled).
    ///
    /// # Examples
    ///
    /// See [`subscribe_lanes`](Flow::subscribe_lanes).
    #[allow(clippy::type_complexity)]
    pub fn into_lane_islands<F, Q, L, G>(
        self,
        config: LanesConfig<S::Out>,
        key: F,
        lane: G,
        subscribers: Vec<BoxSubscriber<L::Out>>,
    ) -> Result<Vec<Island>, (Vec<BoxSubscriber<L::Out>>, Error)>
    where
        F: Fn(&S::Out) -> Q + Send + Sync + 'static,
        Q: LaneKey + 'static,
        L: Shape,
        G: Fn(Flow<LaneIn<S>>) -> Flow<L>,
    {
        let n = subscribers.len();
        if n == 0 {
            return Err((subscribers, Error::new(LanesError::NoLanes)));
        }
        let budget = self.budget();
        let config = config.with_lanes(n);
        let slots: Vec<_> = subscribers
            .into_iter()
            .map(|s| Arc::new(Mutex::new(Some(s))))
            .collect();
        let (upstream, _) = self.into_parts();
        let built = catch_unwind(AssertUnwindSafe(|| {
            let mut b = Build::default();
            if n == 1 {
                let (l, _) = lane(Flow::from_shape(LaneIn {
                    upstream: Some(upstream),
                }))
                .into_parts();
                l.place(&mut b, SubscriberExit::deferred(slots[0].clone()))?;
            } else {
                let split = Split {
                    upstream,
                    lanes: lane_flows(n, &lane),
                    key: StdArc::new(key),
                    config,
                };
                split.place_lanes(
                    &mut b,
                    |i| SubscriberExit::deferred(slots[i].clone()),
                    false,
                )?;
            }
            b.finish()
        }));
        let error = match built {
            Ok(Ok(interpreters)) => {
                return Ok(interpreters
                    .into_iter()
                    .map(|(i, spawn_on)| Island::new(i).with_budget(budget).with_spawn_on(spawn_on))
                    .collect())
            }
            Ok(Err(e)) => Error::new(e),
            Err(p) => Error::new(IslandError::StagePanicked {
                stage: "a stage factory",
                message: report::panic_message(&*p),
            }),
        };
        let back = slots.iter().filter_map(|s| s.lock().take()).collect();
        Err((back, error))
    }

    /// [`into_lane_islands`](Flow::into_lane_islands), started here (every subscriber gets
    /// `on_subscribe` before this returns) and spawned on `runtime`. A build error is
    /// delivered to every subscriber (`on_subscribe`, then `on_error`).
    ///
    /// # Errors
    ///
    /// [`LanesError::NoLanes`] for no subscriber (nobody to tell).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::{flow::Flow, lanes::LanesConfig, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(2).unwrap();
    /// let (a, ha) = collect(RequestStrategy::Prefetch(16));
    /// let (b, hb) = collect(RequestStrategy::Prefetch(16));
    /// Flow::from_iter(0u32..100)
    ///     .subscribe_lanes(&runtime, LanesConfig::new(2), |x| *x, |lane| lane.map(|x| x + 1), vec![Box::new(a), Box::new(b)])
    ///     .unwrap();
    /// let (a, b) = (ha.wait().unwrap(), hb.wait().unwrap());
    /// assert_eq!(a.len() + b.len(), 100);
    /// assert!(a.windows(2).all(|w| w[0] < w[1]) && b.windows(2).all(|w| w[0] < w[1]));
    /// ```
    pub fn subscribe_lanes<F, Q, L, G>(
        self,
        runtime: &Runtime,
        config: LanesConfig<S::Out>,
        key: F,
        lane: G,
        subscribers: Vec<BoxSubscriber<L::Out>>,
    ) -> Result<(), LanesError>
    where
        F: Fn(&S::Out) -> Q + Send + Sync + 'static,
        Q: LaneKey + 'static,
        L: Shape,
        G: Fn(Flow<LaneIn<S>>) -> Flow<L>,
    {
        if subscribers.is_empty() {
            return Err(LanesError::NoLanes);
        }
        match self.into_lane_islands(config, key, lane, subscribers) {
            Ok(islands) => crate::flow::start_and_spawn(islands, runtime),
            Err((subscribers, error)) => {
                for s in subscribers {
                    crate::flow::refuse(s, error.clone());
                }
            }
        }
        Ok(())
    }
}

impl<S: Shape, L, F> LanesShape<S, L, F> {
    /// The lane count (1: the lane flow runs inline).
    pub fn lanes(&self) -> usize {
        match &self.kind {
            Kind::Inline(_) => 1,
            Kind::Split(s) => s.lanes.len(),
        }
    }
}
