//! The user-facing builder: from a `Publisher` (or an iterator), through stages, to a
//! `Publisher` whose every subscription runs as one island.

use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use futures::{Stream, StreamExt, TryStreamExt};

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
};

use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::Arc;

use super::edge::{SharedPublisher, SubscriberOut, SubscriberSink};
use super::fused::{self, Op};
use super::future::{Island, DEFAULT_BUDGET};
use super::interpreter::{BuildError, GraphBuilder, Interpreter};
use super::runtime::Runtime;
use super::segment::{add_bare, Exit, IterOf, Out, SegIn, SegOut};
use super::stage::{Inlet, Outlet, PortId, Stage};
use super::stages::{self, BoxStream};
use super::IslandError;
use crate::boundary::input::RingIn;
use crate::boundary::output::RingOut;
use crate::boundary::{BoundaryConfig, BoundaryInput, BoundarySubscriber};
use crate::boundary::{Producer, Shared};
use crate::panics as report;

/// The input buffer of [`Flow::from_publisher`] (elements prefetched from the upstream).
pub const DEFAULT_INPUT_BUFFER: usize = 16;

/// Adds the source; returns where its elements are: a connection whose in-port the next
/// stage takes, or a boundary's input side for the next segment.
type SourceFn = dyn Fn(&mut GraphBuilder) -> Result<SegIn, BuildError> + Send + Sync;
/// Adds one stage after the position given; returns its output connection.
type StepFn = dyn Fn(&mut GraphBuilder, SegIn) -> Result<u32, BuildError> + Send + Sync;
/// Ends the island at the position given, after the fused operators given, with a boundary's
/// output side; returns the boundary's input side, where the next island starts.
type BoundaryFn =
    dyn Fn(&mut GraphBuilder, SegIn, &[Op]) -> Result<SegIn, BuildError> + Send + Sync;

/// One step of a blueprint: a stage of its own, an operator fused with its neighbours, or an
/// async boundary (the next steps run on another island).
#[derive(Clone)]
enum Step {
    Stage(StdArc<StepFn>),
    Op(Op),
    Boundary(StdArc<BoundaryFn>),
}

/// The connection at `at`: itself, or a bare segment from a boundary's input side into a new
/// connection (for a stage of its own right after a boundary).
fn to_port<T: Send + 'static>(g: &mut GraphBuilder, at: SegIn) -> Result<u32, BuildError> {
    match at {
        SegIn::Port(c) => Ok(c),
        SegIn::Iter(head) => Ok(head.into_stage(g)),
        ring @ SegIn::Ring(_) => {
            let (o, i) = g.connection::<T>();
            add_bare::<T>(g, ring, SegOut::Port(o.id().index()))?;
            Ok(i.id().index())
        }
    }
}

/// Adds `ops` (possibly none) from `at` into `exit`.
fn into_exit<T: Send + 'static>(
    g: &mut GraphBuilder,
    at: SegIn,
    ops: &[Op],
    exit: Box<dyn Exit>,
) -> Result<(), BuildError> {
    if ops.is_empty() {
        add_bare::<T>(g, at, SegOut::Out(exit))
    } else {
        fused::materialise(ops, g, at, Some(exit)).map(|_| ())
    }
}

/// How a materialised flow ends.
enum Final<T> {
    /// A subscriber, signalled per element.
    Subscriber(BoxSubscriber<T>),
    /// A boundary subscriber of ours, taken over: the last island writes batches into it.
    Boundary(Arc<Shared<T>>),
}

/// The boundary of a [`BoundarySubscriber`] (or of a processor's subscriber half) behind
/// `subscriber`, claimed for an output side of ours; `None` for any other subscriber, or one
/// already subscribed.
fn take_over<T: Send + 'static>(subscriber: &mut BoxSubscriber<T>) -> Option<Arc<Shared<T>>> {
    let b = subscriber
        .__internal()?
        .downcast_mut::<BoundarySubscriber<T>>()?;
    let shared = b.take_over()?;
    let claimed = {
        let mut control = shared.control();
        let ok = shared.claim(Producer::Internal, &mut control);
        if ok {
            // Its island may be running already: it prefetches once it sees its producer.
            if let Some(n) = &control.consumer {
                n.notify();
            }
        }
        ok
    };
    claimed.then_some(shared)
}

/// A blueprint of a linear stream: a source, then stages, producing `T`.
///
/// Nothing runs until [`into_publisher`](Flow::into_publisher)'s publisher is subscribed to
/// (or [`into_island`](Flow::into_island) is run): each subscription materialises the whole
/// blueprint afresh as one [`Island`] — its own upstream subscription, its own stage state —
/// so the publisher is cold, like the sources in [`crate::source`]. The functions given to
/// `map`, `filter`, … are shared (behind an `Arc`) by every materialisation. A blueprint is
/// a `Vec` of steps, so chains of any length build without recursion.
///
/// **Fusion:** consecutive `map`, `filter`, `take`, `skip`, `scan` and `identity` become one
/// interpreter stage that runs them as a chain of direct calls (at most 64 per stage), so such
/// a hop costs a function call, not an interpreter event; `fold`, `take(0)` and user stages
/// added with [`via`](Flow::via) are stages of their own.
///
/// # Contract of the resulting publisher
///
/// * **Signals** reach the subscriber serially (rule 1.3): `on_subscribe` on the thread that
///   calls `subscribe`, before it returns (with every stage's `pre_start`, and the upstream's
///   `subscribe`); every later signal on the island's thread (a worker of the runtime).
/// * **`request` and `cancel`** may be called from any thread, also from inside `on_next`; they
///   only record and post to the island, and return at once (3.2–3.5). `request(0)` ends the
///   subscription with `on_error` naming rule 3.9; demand saturates (3.17).
/// * **Slow subscriber:** the island pulls from its upstream only what downstream demand
///   allows: at most one element per connection inside the island, plus the input buffer of
///   [`from_publisher`](Flow::from_publisher) (16 by default). Memory is bounded by that.
/// * **Cancel** cancels the upstream subscription and finalises every stage (their state is
///   dropped); elements in flight are dropped.
/// * **Termination:** the upstream's completion reaches the subscriber after every element it
///   sent (deferred until the input buffer drained), an upstream error at once (buffered input
///   is dropped); a stage that panics fails the stream with
///   [`IslandError::StagePanicked`].
/// * **A panicking subscriber** is cancelled (2.13), which cancels the upstream too; the panic
///   is reported through [`crate::panics`]. Other subscriptions run on other islands and are
///   unaffected.
/// * **Late subscribers** get their own run of the whole stream.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::island::{Flow, Runtime};
/// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
///
/// let runtime = Runtime::with_threads(1).unwrap();
/// let evens_squared = Flow::from_publisher(source::range(0u64..100))
///     .filter(|x| x % 2 == 0)
///     .map(|x| x * x)
///     .take(3)
///     .into_publisher(&runtime);
/// let (s, h) = collect(RequestStrategy::OneByOne);
/// evens_squared.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), vec![0, 4, 16]);
/// ```
pub struct Flow<T> {
    source: StdArc<SourceFn>,
    steps: Vec<Step>,
    budget: u64,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Flow<T> {
    fn clone(&self) -> Self {
        Flow {
            source: self.source.clone(),
            steps: self.steps.clone(),
            budget: self.budget,
            _t: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Flow<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flow")
            .field("stages", &(self.steps.len() + 1))
            .field("budget", &self.budget)
            .finish()
    }
}

impl<T: Send + 'static> Flow<T> {
    /// A flow whose elements come from `publisher` (any implementation, ours or foreign),
    /// through an input buffer of [`DEFAULT_INPUT_BUFFER`] elements.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn from_publisher<P>(publisher: P) -> Self
    where
        P: Publisher<T> + Send + Sync + 'static,
    {
        Self::from_shared_publisher(StdArc::new(publisher), DEFAULT_INPUT_BUFFER)
    }

    /// A flow from a shared publisher, with an input buffer of `buffer` elements (rounded up
    /// to a power of two, at least 2): prefetched up front, replenished by half after half was
    /// taken by the island.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let f = rs_impl::island::Flow::from_shared_publisher(Arc::new(rs_impl::source::range(0u8..3)), 4);
    /// # drop(f);
    /// ```
    pub fn from_shared_publisher(publisher: SharedPublisher<T>, buffer: usize) -> Self {
        Self::from_source(move |_| {
            let ring = RingIn::new(Shared::new(buffer), Some(publisher.clone()));
            Ok(SegIn::Ring(Box::new(ring)))
        })
    }

    /// A flow fed by a [`BoundarySubscriber`]'s ring: `input` is what
    /// [`BoundarySubscriber::new`] returned with the subscriber. A boundary has one consumer,
    /// so only one island can be materialised from it: a second materialisation fails to
    /// build ([`BuildError::AlreadyMaterialised`]).
    ///
    /// # Examples
    ///
    /// See [`BoundarySubscriber`].
    pub fn from_boundary(input: BoundaryInput<T>) -> Self {
        let shared = input.shared;
        Self::from_source(move |_| {
            if !shared.claim_consumer() {
                return Err(BuildError::AlreadyMaterialised);
            }
            Ok(SegIn::Ring(Box::new(RingIn::new(shared.clone(), None))))
        })
    }

    /// A flow of the items of `iterable`, produced inside the island (no upstream protocol);
    /// each materialisation iterates a fresh clone.
    ///
    /// # Examples
    ///
    /// See [`Runtime`].
    #[allow(clippy::should_implement_trait)]
    pub fn from_iter<I>(iterable: I) -> Self
    where
        I: IntoIterator<Item = T> + Clone + Send + Sync + 'static,
        I::IntoIter: Send + 'static,
    {
        Self::from_source(move |_| Ok(SegIn::Iter(Box::new(IterOf(iterable.clone().into_iter())))))
    }

    /// A flow of the elements of a fresh `futures::Stream` per materialisation, made by
    /// `make`, polled on the island (a [`StreamSource`](super::stages::StreamSource): it
    /// polls one ahead, so at most one element is taken before it is pulled).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::island::{Flow, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(1).unwrap();
    /// let p = Flow::from_stream(|| futures::stream::iter(1..=4u32))
    ///     .map(|x| x * 10)
    ///     .into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Prefetch(2));
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![10, 20, 30, 40]);
    /// ```
    pub fn from_stream<St, F>(make: F) -> Self
    where
        F: Fn() -> St + Send + Sync + 'static,
        St: Stream<Item = T> + Send + 'static,
    {
        Self::from_boxed_stream(move || Box::pin(make().map(Ok)))
    }

    /// [`from_stream`](Self::from_stream) for streams of `Result`s: `Ok` elements, the first
    /// `Err` fails the flow (any error type; an [`Error`] passes through as it is).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Publisher};
    /// use rs_impl::island::{Flow, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(1).unwrap();
    /// let p = Flow::from_try_stream(|| futures::stream::iter([Ok(1u8), Err(Error::msg("gone"))]))
    ///     .into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap_err().to_string(), "gone");
    /// ```
    pub fn from_try_stream<E, St, F>(make: F) -> Self
    where
        F: Fn() -> St + Send + Sync + 'static,
        St: Stream<Item = Result<T, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::from_boxed_stream(move || Box::pin(make().map_err(crate::compat::into_error)))
    }

    /// A flow of the boxed stream `make` returns for each materialisation.
    pub(crate) fn from_boxed_stream<F>(make: F) -> Self
    where
        F: Fn() -> BoxStream<T> + Send + Sync + 'static,
    {
        Self::from_source(move |g| {
            let (o, i) = g.connection::<T>();
            g.add_stage(stages::StreamSource::new(o, make()));
            Ok(SegIn::Port(i.id().index()))
        })
    }

    pub(super) fn from_source<F>(f: F) -> Self
    where
        F: Fn(&mut GraphBuilder) -> Result<SegIn, BuildError> + Send + Sync + 'static,
    {
        Flow {
            source: StdArc::new(f),
            steps: Vec::new(),
            budget: DEFAULT_BUDGET,
            _t: PhantomData,
        }
    }

    /// Adds a user-written stage, made by `factory` for each materialisation from its in-port
    /// and out-port.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::island::{stages::Map, Flow};
    /// let f = Flow::from_iter(0..3u8).via(|i, o| Map::new(i, o, |x: u8| x as u32));
    /// # drop(f);
    /// ```
    pub fn via<U, S, F>(mut self, factory: F) -> Flow<U>
    where
        U: Send + 'static,
        S: Stage + 'static,
        F: Fn(Inlet<T>, Outlet<U>) -> S + Send + Sync + 'static,
    {
        self.steps.push(Step::Stage(StdArc::new(
            move |g: &mut GraphBuilder, at: SegIn| {
                let c = to_port::<T>(g, at)?;
                let inlet = g.inlet::<T>(PortId(c))?;
                let (o, next) = g.connection::<U>();
                g.add_stage(factory(inlet, o));
                Ok(next.id().index())
            },
        )));
        self.retype()
    }

    /// Adds a fusable operator producing `U`.
    fn op<U>(mut self, op: Op) -> Flow<U> {
        self.steps.push(Step::Op(op));
        self.retype()
    }

    fn retype<U>(self) -> Flow<U> {
        Flow {
            source: self.source,
            steps: self.steps,
            budget: self.budget,
            _t: PhantomData,
        }
    }

    /// Passes every element through unchanged (one more stage: for benchmarks and tests).
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::island::Flow::from_iter(0..3u8).identity();
    /// # drop(f);
    /// ```
    pub fn identity(self) -> Flow<T> {
        self.op(fused::identity::<T>())
    }

    /// Applies `f` to every element.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn map<U, F>(self, f: F) -> Flow<U>
    where
        U: Send + 'static,
        F: Fn(T) -> U + Send + Sync + 'static,
    {
        self.op(fused::map(StdArc::new(f)))
    }

    /// Keeps the elements for which `f` holds.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn filter<F>(self, f: F) -> Flow<T>
    where
        F: Fn(&T) -> bool + Send + Sync + 'static,
    {
        self.op(fused::filter(StdArc::new(f)))
    }

    /// Passes the first `n` elements, then completes (cancelling the upstream).
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn take(self, n: u64) -> Flow<T> {
        if n == 0 {
            // Completes at start, before any pull: a stage of its own.
            return self.via(move |i, o| stages::Take::new(i, o, 0));
        }
        self.op(fused::take::<T>(n))
    }

    /// Drops the first `n` elements (Pekko's `drop`).
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::island::Flow::from_iter(0..3u8).skip(1);
    /// # drop(f);
    /// ```
    pub fn skip(self, n: u64) -> Flow<T> {
        self.op(fused::skip::<T>(n))
    }

    /// Emits `acc = f(&acc, x)` after each element, starting from `seed`.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::island::Flow::from_iter(1..4u32).scan(0u32, |a, x| a + x);
    /// # drop(f);
    /// ```
    pub fn scan<S, F>(self, seed: S, f: F) -> Flow<S>
    where
        S: Clone + Send + Sync + 'static,
        F: Fn(&S, T) -> S + Send + Sync + 'static,
    {
        self.op(fused::scan::<T, S, F>(seed, StdArc::new(f)))
    }

    /// Emits the fold of every element with `f` when the upstream completes.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::island::Flow::from_iter(1..4u32).fold(0u32, |a, x| a + x);
    /// # drop(f);
    /// ```
    pub fn fold<S, F>(self, seed: S, f: F) -> Flow<S>
    where
        S: Clone + Send + Sync + 'static,
        F: Fn(S, T) -> S + Send + Sync + 'static,
    {
        let f = StdArc::new(f);
        self.via(move |i, o| {
            let f = f.clone();
            stages::Fold::new(i, o, seed.clone(), move |a: S, x| f(a, x))
        })
    }

    /// An asynchronous boundary with the default [`BoundaryConfig`]: the steps before it run
    /// on one island, the steps after it on another, joined by a batching boundary (see
    /// [`crate::boundary`] for the contract).
    ///
    /// # Examples
    ///
    /// See [`crate::boundary`].
    pub fn async_boundary(self) -> Flow<T> {
        self.async_boundary_with(BoundaryConfig::new())
    }

    /// An asynchronous boundary set up with `config` (its ring size; batching on or off).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::boundary::BoundaryConfig;
    /// let f = rs_impl::island::Flow::from_iter(0..3u8)
    ///     .async_boundary_with(BoundaryConfig::new().size(16).batching(false));
    /// # drop(f);
    /// ```
    pub fn async_boundary_with(mut self, config: BoundaryConfig) -> Flow<T> {
        self.steps.push(Step::Boundary(StdArc::new(
            move |g: &mut GraphBuilder, at: SegIn, ops: &[Op]| {
                let shared = Shared::<T>::new(config.ring_size());
                {
                    let mut control = shared.control();
                    shared.claim(Producer::Internal, &mut control);
                }
                shared.claim_consumer();
                let exit = Box::new(Out::Ring(RingOut::new(shared.clone(), config.cap())));
                into_exit::<T>(g, at, ops, exit)?;
                Ok(SegIn::Ring(Box::new(RingIn::new(shared, None))))
            },
        )));
        self
    }

    /// The number of islands each materialisation runs: one more than its async boundaries.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::island::Flow::from_iter(0..3u8).async_boundary().map(|x| x + 1);
    /// assert_eq!(f.islands(), 2);
    /// ```
    pub fn islands(&self) -> usize {
        1 + self
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Boundary(_)))
            .count()
    }

    /// Sets the island's budget: events per `poll` before it yields to its executor.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::island::Flow::from_iter(0..3u8).with_budget(64);
    /// # drop(f);
    /// ```
    pub fn with_budget(mut self, events: u64) -> Self {
        self.budget = events.max(1);
        self
    }

    /// Materialises the blueprint for `subscriber`: one island, to spawn on any executor. A
    /// flow with async boundaries runs on several islands: use
    /// [`into_islands`](Flow::into_islands).
    ///
    /// # Errors
    ///
    /// The subscriber is given back with the error when the blueprint cannot be built (a
    /// stage factory panicked, a user stage declared its ports wrongly, the flow has async
    /// boundaries).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::island::Flow;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// let island = Flow::from_iter(0..3u8).map(|x| x * 2).into_island(Box::new(s)).unwrap();
    /// futures::executor::block_on(island);
    /// assert_eq!(h.wait().unwrap(), vec![0, 2, 4]);
    /// ```
    pub fn into_island(&self, subscriber: BoxSubscriber<T>) -> Result<Island, NotBuilt<T>> {
        if self.islands() > 1 {
            return Err(NotBuilt {
                subscriber,
                error: Error::new(BuildError::SeveralIslands {
                    islands: self.islands(),
                }),
            });
        }
        let mut islands = self.into_islands(subscriber)?;
        Ok(islands.pop().expect("one island"))
    }

    /// Materialises the blueprint for `subscriber`: one island per segment between async
    /// boundaries, in flow order (the last one serves `subscriber`). Spawn every one of them;
    /// [`Island::start`] them first to deliver `on_subscribe` on the calling thread.
    ///
    /// # Errors
    ///
    /// The subscriber is given back with the error when the blueprint cannot be built (a
    /// stage factory panicked, or a user stage declared its ports wrongly).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::island::Flow;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// let islands = Flow::from_iter(0..3u8)
    ///     .async_boundary()
    ///     .map(|x| x * 2)
    ///     .into_islands(Box::new(s))
    ///     .unwrap();
    /// assert_eq!(islands.len(), 2);
    /// let threads: Vec<_> = islands
    ///     .into_iter()
    ///     .map(|i| std::thread::spawn(move || futures::executor::block_on(i)))
    ///     .collect();
    /// assert_eq!(h.wait().unwrap(), vec![0, 2, 4]);
    /// # for t in threads { t.join().unwrap(); }
    /// ```
    pub fn into_islands(
        &self,
        mut subscriber: BoxSubscriber<T>,
    ) -> Result<Vec<Island>, NotBuilt<T>> {
        let last = match take_over(&mut subscriber) {
            Some(shared) => {
                report::drop_guarded(subscriber);
                Final::Boundary(shared)
            }
            None => Final::Subscriber(subscriber),
        };
        self.materialise(last)
    }

    fn materialise(&self, last: Final<T>) -> Result<Vec<Island>, NotBuilt<T>> {
        let mut built = Vec::with_capacity(self.islands());
        let r = catch_unwind(AssertUnwindSafe(|| -> Result<_, BuildError> {
            let mut g = GraphBuilder::new();
            let mut at = (self.source)(&mut g)?;
            let mut ops: Vec<Op> = Vec::new();
            for step in &self.steps {
                match step {
                    Step::Op(op) => ops.push(op.clone()),
                    Step::Stage(f) => {
                        if !ops.is_empty() {
                            let c = fused::materialise(&ops, &mut g, at, None)?;
                            at = SegIn::Port(c.expect("a segment without exit ends in a port"));
                            ops.clear();
                        }
                        at = SegIn::Port(f(&mut g, at)?);
                    }
                    Step::Boundary(b) => {
                        at = b(&mut g, at, &ops)?;
                        ops.clear();
                        built.push(std::mem::take(&mut g).build()?);
                    }
                }
            }
            Ok((g, at, ops))
        }));
        let (mut g, at, ops) = match r {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => return Err(not_built(last, Error::new(e))),
            Err(p) => {
                let error = Error::new(IslandError::StagePanicked {
                    stage: "a stage factory",
                    message: report::panic_message(&*p),
                });
                return Err(not_built(last, error));
            }
        };
        let ended = match last {
            Final::Boundary(shared) => {
                let cap = (shared.size() / 2).max(1);
                let exit = Box::new(Out::Ring(RingOut::new(shared, cap)));
                into_exit::<T>(&mut g, at, &ops, exit)
            }
            Final::Subscriber(subscriber) => match at {
                // After a boundary: the subscriber is served by the segment itself.
                ring @ SegIn::Ring(_) => {
                    let exit = Box::new(Out::Subscriber(SubscriberOut::new(subscriber)));
                    into_exit::<T>(&mut g, ring, &ops, exit)
                }
                at => (|| {
                    let c = if ops.is_empty() {
                        to_port::<T>(&mut g, at)?
                    } else {
                        fused::materialise(&ops, &mut g, at, None)?
                            .expect("a segment without exit ends in a port")
                    };
                    let inlet = g.inlet::<T>(PortId(c))?;
                    g.add_stage(SubscriberSink::new(inlet, subscriber));
                    Ok(())
                })(),
            },
        };
        let island = ended.and_then(|()| g.build());
        match island {
            Ok(interpreter) => {
                built.push(interpreter);
                Ok(built
                    .into_iter()
                    .map(|i: Interpreter| Island::new(i).with_budget(self.budget))
                    .collect())
            }
            Err(e) => Err(NotBuilt {
                subscriber: Box::new(Refused),
                error: Error::new(e),
            }),
        }
    }

    /// A publisher that runs this blueprint on `runtime`, one island per subscription.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn into_publisher(self, runtime: &Runtime) -> FlowPublisher<T> {
        FlowPublisher {
            flow: self,
            runtime: runtime.clone(),
        }
    }
}

/// A blueprint that could not be materialised: the error, and the subscriber given back (not
/// yet subscribed to anything).
pub struct NotBuilt<T> {
    /// The subscriber handed to [`Flow::into_island`].
    pub subscriber: BoxSubscriber<T>,
    /// Why the island could not be built.
    pub error: Error,
}

impl<T> fmt::Debug for NotBuilt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NotBuilt")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// The subscriber given back from a failed build; a taken-over boundary fails instead (its
/// island sees the error).
fn not_built<T: Send + 'static>(last: Final<T>, error: Error) -> NotBuilt<T> {
    match last {
        Final::Subscriber(subscriber) => NotBuilt { subscriber, error },
        Final::Boundary(shared) => {
            let mut exit = RingOut::new(shared, 1);
            exit.fail(error.clone());
            NotBuilt {
                subscriber: Box::new(Refused),
                error,
            }
        }
    }
}

/// Stands in for a subscriber lost inside a failed build (it cannot be recovered from the
/// graph builder); never signalled.
struct Refused;

impl<T> rs_api::Subscriber<T> for Refused {
    fn on_subscribe(&mut self, s: rs_api::SubscriptionRef) {
        s.cancel();
    }
    fn on_next(&mut self, _: T) {}
    fn on_error(&mut self, _: Error) {}
    fn on_complete(&mut self) {}
}

/// The subscription given with a refusal: nothing to request or cancel.
struct Over;

impl Subscription for Over {
    fn request(&self, _: u64) {}
    fn cancel(&self) {}
}

/// A publisher running a [`Flow`] on a [`Runtime`]: each `subscribe` materialises one island
/// and spawns it (see [`Flow`] for the contract).
pub struct FlowPublisher<T> {
    flow: Flow<T>,
    runtime: Runtime,
}

impl<T> Clone for FlowPublisher<T> {
    fn clone(&self) -> Self {
        FlowPublisher {
            flow: self.flow.clone(),
            runtime: self.runtime.clone(),
        }
    }
}

impl<T> fmt::Debug for FlowPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlowPublisher")
            .field("flow", &self.flow)
            .field("runtime", &self.runtime)
            .finish()
    }
}

impl<T: Send + 'static> Publisher<T> for FlowPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        spawn_flow(&self.flow, subscriber, &self.runtime);
    }
}

/// Materialises `flow` for `subscriber`, starts its islands here (`on_subscribe` before
/// `subscribe` returns) and spawns them on `runtime`; refuses the subscriber (1.9) if the
/// flow cannot be built.
fn spawn_flow<T: Send + 'static>(flow: &Flow<T>, subscriber: BoxSubscriber<T>, runtime: &Runtime) {
    match flow.into_islands(subscriber) {
        Ok(mut islands) => {
            for island in &mut islands {
                island.start();
            }
            for island in islands {
                runtime.spawn(island);
            }
        }
        Err(NotBuilt { subscriber, error }) => refuse(subscriber, error),
    }
}

/// A [`Processor`](rs_api::Processor) that runs a flow on one island: its subscriber half is
/// the island's input side, its publisher half the island's output. A cheap `Clone` handle
/// (one clone goes to the upstream's `subscribe`, another serves the downstream).
///
/// **Unicast:** the first downstream `subscribe` materialises the island; any later subscriber
/// gets `on_subscribe` and then `on_error` with [`SpecViolation::Rejected`] (rule 1.9). The
/// upstream may subscribe the processor before or after that: signals that arrive first wait
/// in the input buffer (its size, prefetched and replenished by half) and the island catches
/// up when it starts. Everything else is the contract of [`Flow`]: the upstream's
/// completion after every element, its error at once, a downstream cancel cancelling it.
///
/// # Examples
///
/// ```
/// use rs_api::{Publisher, PublisherExt};
/// use rs_impl::island::{IslandProcessor, Runtime};
/// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
///
/// let runtime = Runtime::with_threads(1).unwrap();
/// let doubled = IslandProcessor::new(|f| f.map(|x: u32| x * 2), 16, &runtime);
/// let (s, h) = collect(RequestStrategy::Prefetch(4));
/// doubled.subscribe(Box::new(s));
/// source::range(0u32..5).subscribe_with(doubled.clone());
/// assert_eq!(h.wait().unwrap(), vec![0, 2, 4, 6, 8]);
/// ```
pub struct IslandProcessor<T, R> {
    input: BoundarySubscriber<T>,
    shared: StdArc<ProcessorShared<R>>,
}

struct ProcessorShared<R> {
    flow: Flow<R>,
    runtime: Runtime,
    materialised: AtomicBool,
}

impl<T, R> Clone for IslandProcessor<T, R> {
    fn clone(&self) -> Self {
        IslandProcessor {
            input: self.input.clone(),
            shared: self.shared.clone(),
        }
    }
}

impl<T, R> fmt::Debug for IslandProcessor<T, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IslandProcessor")
            .field("flow", &self.shared.flow)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static, R: Send + 'static> IslandProcessor<T, R> {
    /// A processor running `build(input)` on `runtime`, where `input` is the flow of the
    /// elements this processor receives as a subscriber, through an input buffer of `buffer`
    /// elements.
    ///
    /// # Examples
    ///
    /// See [`IslandProcessor`].
    pub fn new<F>(build: F, buffer: usize, runtime: &Runtime) -> Self
    where
        F: FnOnce(Flow<T>) -> Flow<R>,
    {
        let (input, ring) = BoundarySubscriber::<T>::new(buffer);
        let flow = build(Flow::from_boundary(ring));
        IslandProcessor {
            input,
            shared: StdArc::new(ProcessorShared {
                flow,
                runtime: runtime.clone(),
                materialised: AtomicBool::new(false),
            }),
        }
    }
}

impl<T: Send + 'static, R> Subscriber<T> for IslandProcessor<T, R>
where
    R: Send + 'static,
{
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.input.on_subscribe(subscription);
    }
    fn on_next(&mut self, item: T) {
        self.input.on_next(item);
    }
    fn on_error(&mut self, error: Error) {
        self.input.on_error(error);
    }
    fn on_complete(&mut self) {
        self.input.on_complete();
    }
    fn __internal(&mut self) -> Option<&mut dyn std::any::Any> {
        self.input.__internal()
    }
}

impl<T: Send + 'static, R: Send + 'static> Publisher<R> for IslandProcessor<T, R> {
    fn subscribe(&self, subscriber: BoxSubscriber<R>) {
        if self.shared.materialised.swap(true, Ordering::AcqRel) {
            refuse(
                subscriber,
                SpecViolation::Rejected {
                    reason: "an IslandProcessor serves one subscriber".into(),
                }
                .into(),
            );
            return;
        }
        spawn_flow(&self.shared.flow, subscriber, &self.shared.runtime);
    }
}

/// 1.9: `on_subscribe`, then the refusal as `on_error`; no panic escapes.
fn refuse<T>(mut subscriber: BoxSubscriber<T>, error: Error) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        subscriber.on_subscribe(StdArc::new(Over));
        subscriber.on_error(error);
    }));
    if let Err(p) = r {
        report::subscriber_panicked("on_error", p);
    }
    report::drop_guarded(subscriber);
}
