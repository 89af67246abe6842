//! [`Flow`]: the typed builder users write.

use std::any::Any;
use std::fmt;
use std::sync::Arc as StdArc;

use futures::{Stream, StreamExt, TryStreamExt};
use rs_api::{BoxSubscriber, Error, Publisher};

use super::operator::Operator;
use super::ops::{Filter, Fold, Identity, Map, Scan, Skip, Take};
use super::plan::Plan;
use super::publisher::{islands_for, FlowPublisher, NotBuilt};
use super::ring_in::SharedPublisher;
use super::shape::{
    Apply, Boundary, Boxed, FromBoundary, FromIter, FromPublisher, FromStream, Shape, Via,
};
use super::stream::BoxStream;
use crate::boundary::{BoundaryConfig, BoundaryInput};
use crate::island::{BuildError, Inlet, Island, Outlet, Runtime, Stage, DEFAULT_BUDGET};

/// The input buffer of [`Flow::from_publisher`] (elements prefetched from the upstream).
pub const DEFAULT_INPUT_BUFFER: usize = 16;

/// A flow whose blueprint type is erased ([`Flow::boxed`]).
pub type BoxFlow<T> = Flow<Boxed<T>>;

/// A blueprint of a linear stream: a source, then operators and stages, producing
/// `S::Out`.
///
/// Nothing runs until [`into_publisher`](Flow::into_publisher)'s publisher is subscribed to
/// (or [`into_island`](Flow::into_island) is run): each subscription materialises the whole
/// blueprint afresh as one [`Island`] per segment between async boundaries — its own upstream
/// subscription, its own operator state (a fresh clone of each operator) — so the publisher
/// is cold, like the sources in [`crate::source`]. The functions given to `map`, `filter`, …
/// are shared (behind an `Arc`) by every materialisation.
///
/// **Operators are types** (like iterator adapters): `map` returns a `Flow<Apply<S, Map<F>>>`,
/// so a chain's type spells its operators and the compiler fuses them: between two island
/// edges, a run of operators is one loop of direct, inlined calls. An operator of your own
/// ([`Operator`], added with [`apply`](Flow::apply)) fuses the same way. A stage of your own
/// ([`Stage`], added with [`via`](Flow::via)) runs as an interpreter stage, joined to the
/// fused segments by ports. To name a flow's type, write `Flow<impl Shape<Out = T>>`, or
/// erase it with [`boxed`](Flow::boxed) (one dynamic call per element at that point).
///
/// # Contract of the resulting publisher
///
/// * **Signals** reach the subscriber serially (rule 1.3): `on_subscribe` on the thread that
///   calls `subscribe`, before it returns (with every operator's `on_start`, every stage's
///   `pre_start`, and the upstream's `subscribe`); every later signal on the island's thread
///   (a worker of the runtime).
/// * **`request` and `cancel`** may be called from any thread, also from inside `on_next`; they
///   only record and post to the island, and return at once (3.2–3.5). `request(0)` ends the
///   subscription with `on_error` naming rule 3.9; demand saturates (3.17).
/// * **Slow subscriber:** the island pulls from its upstream only what downstream demand
///   allows: at most one element per connection inside the island, what an operator holds
///   back (a fold's result), plus the input buffer of [`from_publisher`](Flow::from_publisher)
///   ([`DEFAULT_INPUT_BUFFER`] by default). Memory is bounded by that.
/// * **Cancel** cancels the upstream subscription and finalises every stage (their state is
///   dropped); elements in flight are dropped.
/// * **Termination:** the upstream's completion reaches the subscriber after every element it
///   sent (deferred until the input buffer drained), an upstream error at once (buffered input
///   is dropped); an operator or stage that panics fails the stream with
///   [`IslandError::StagePanicked`](crate::island::IslandError::StagePanicked).
/// * **A panicking subscriber** is cancelled (2.13), which cancels the upstream too; the panic
///   is reported through [`crate::panics`]. Other subscriptions run on other islands and are
///   unaffected.
/// * **Late subscribers** get their own run of the whole stream.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::flow::Flow;
/// use rs_impl::island::Runtime;
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
#[must_use = "flows do nothing unless materialised (into_publisher, into_island)"]
#[derive(Clone)]
pub struct Flow<S> {
    shape: S,
    budget: u64,
}

impl<S: Shape> fmt::Debug for Flow<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flow")
            .field("out", &std::any::type_name::<S::Out>())
            .field("islands", &self.shape.islands())
            .field("budget", &self.budget)
            .finish()
    }
}

impl<S> Flow<S> {
    pub(crate) fn from_shape(shape: S) -> Self {
        Flow {
            shape,
            budget: DEFAULT_BUDGET,
        }
    }

    /// The blueprint and the islands' budget (keyed lanes materialise them by hand).
    pub(crate) fn into_parts(self) -> (S, u64) {
        (self.shape, self.budget)
    }

    /// The islands' budget.
    pub(crate) fn budget(&self) -> u64 {
        self.budget
    }

    pub(crate) fn with_shape<S2>(self, shape: impl FnOnce(S) -> S2) -> Flow<S2> {
        Flow {
            shape: shape(self.shape),
            budget: self.budget,
        }
    }
}

impl<I> Flow<FromIter<I>>
where
    I: IntoIterator + Clone + Send + Sync + 'static,
    I::IntoIter: Send + 'static,
    I::Item: Send + 'static,
{
    /// A flow of the items of `iterable`, produced inside the island (no upstream protocol);
    /// each materialisation iterates a fresh clone.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, island::Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(1).unwrap();
    /// let p = Flow::from_iter(1..=3u8).map(|x| x * 2).into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![2, 4, 6]);
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn from_iter(iterable: I) -> Self {
        Flow::from_shape(FromIter::new(iterable))
    }
}

impl<T: Send + 'static> Flow<FromPublisher<T>> {
    /// A flow whose elements come from `publisher` (any implementation, ours or foreign),
    /// through an input buffer of [`DEFAULT_INPUT_BUFFER`] elements. A [`FlowPublisher`] of
    /// ours is recognised: its last island then writes batches straight into this island's
    /// buffer (the batching boundary), with no `on_next` per element.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn from_publisher<P>(publisher: P) -> Self
    where
        P: Publisher<T> + Send + Sync + 'static,
    {
        Self::from_publisher_with(publisher, DEFAULT_INPUT_BUFFER)
    }

    /// [`from_publisher`](Self::from_publisher) with an input buffer of `buffer` elements
    /// (rounded up to a power of two): prefetched up front, replenished by half after half
    /// was taken by the island.
    ///
    /// # Panics
    ///
    /// If `buffer` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::flow::Flow::from_publisher_with(rs_impl::source::range(0u8..3), 1024);
    /// # drop(f);
    /// ```
    #[track_caller]
    pub fn from_publisher_with<P>(publisher: P, buffer: usize) -> Self
    where
        P: Publisher<T> + Send + Sync + 'static,
    {
        assert!(
            buffer > 0,
            "Flow::from_publisher_with: the input buffer must hold at least one element"
        );
        let any: &dyn Any = &publisher;
        if let Some(ours) = any.downcast_ref::<FlowPublisher<T>>() {
            let (plan, runtime) = ours.parts();
            return Flow::from_shape(FromPublisher::flow(plan, runtime, buffer));
        }
        Self::from_shared_publisher(StdArc::new(publisher), buffer)
    }

    /// A flow from a shared publisher, with an input buffer of `buffer` elements (see
    /// [`from_publisher_with`](Self::from_publisher_with)).
    ///
    /// # Panics
    ///
    /// If `buffer` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let f = rs_impl::flow::Flow::from_shared_publisher(Arc::new(rs_impl::source::range(0u8..3)), 4);
    /// # drop(f);
    /// ```
    #[track_caller]
    pub fn from_shared_publisher(publisher: SharedPublisher<T>, buffer: usize) -> Self {
        assert!(
            buffer > 0,
            "Flow::from_shared_publisher: the input buffer must hold at least one element"
        );
        Flow::from_shape(FromPublisher::publisher(publisher, buffer))
    }
}

impl<T: Send + 'static> Flow<FromBoundary<T>> {
    /// A flow fed by a [`BoundarySubscriber`](crate::boundary::BoundarySubscriber)'s ring:
    /// `input` is what `BoundarySubscriber::new` returned with the subscriber. A boundary has
    /// one consumer, so only one island can be materialised from it: a second
    /// materialisation fails to build ([`BuildError::AlreadyMaterialised`]).
    ///
    /// # Examples
    ///
    /// See [`BoundarySubscriber`](crate::boundary::BoundarySubscriber).
    pub fn from_boundary(input: BoundaryInput<T>) -> Self {
        Flow::from_shape(FromBoundary::new(input.shared))
    }
}

impl<T: Send + 'static> Flow<FromStream<T>> {
    /// A flow of the elements of a fresh `futures::Stream` per materialisation, made by
    /// `make`, polled on the island (it polls one ahead, so at most one element is taken
    /// before it is pulled).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, island::Runtime};
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
    /// use rs_impl::{flow::Flow, island::Runtime};
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
        Flow::from_shape(FromStream::new(StdArc::new(make)))
    }
}

impl<S: Shape> Flow<S> {
    /// Appends a linear operator: yours ([`Operator`]) or a built-in one ([`ops`](super::ops));
    /// it fuses with the operators around it.
    ///
    /// # Examples
    ///
    /// See [`Operator`].
    pub fn apply<O>(self, op: O) -> Flow<Apply<S, O>>
    where
        O: Operator<S::Out> + Sync,
    {
        self.with_shape(|s| Apply::new(s, op))
    }

    /// Passes every element through unchanged (one more hop: for benchmarks and tests).
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::flow::Flow::from_iter(0..3u8).identity();
    /// # drop(f);
    /// ```
    pub fn identity(self) -> Flow<Apply<S, Identity<S::Out>>> {
        self.apply(Identity::new())
    }

    /// Applies `f` to every element.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn map<U, F>(self, f: F) -> Flow<Apply<S, Map<F>>>
    where
        U: Send + 'static,
        F: Fn(S::Out) -> U + Send + Sync + 'static,
    {
        self.apply(Map::new(f))
    }

    /// Keeps the elements for which `f` holds.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn filter<F>(self, f: F) -> Flow<Apply<S, Filter<F>>>
    where
        F: Fn(&S::Out) -> bool + Send + Sync + 'static,
    {
        self.apply(Filter::new(f))
    }

    /// Passes the first `n` elements, then completes (cancelling the upstream); `take(0)`
    /// completes at start.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn take(self, n: u64) -> Flow<Apply<S, Take<S::Out>>> {
        self.apply(Take::new(n))
    }

    /// Drops the first `n` elements (Pekko's `drop`).
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::flow::Flow::from_iter(0..3u8).skip(1);
    /// # drop(f);
    /// ```
    pub fn skip(self, n: u64) -> Flow<Apply<S, Skip<S::Out>>> {
        self.apply(Skip::new(n))
    }

    /// Emits `acc = f(&acc, x)` after each element, starting from `seed`.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::flow::Flow::from_iter(1..4u32).scan(0u32, |a, x| a + x);
    /// # drop(f);
    /// ```
    pub fn scan<A, F>(self, seed: A, f: F) -> Flow<Apply<S, Scan<A, F>>>
    where
        A: Clone + Send + Sync + 'static,
        F: Fn(&A, S::Out) -> A + Send + Sync + 'static,
    {
        self.apply(Scan::new(seed, f))
    }

    /// Emits the fold of every element with `f` when the upstream completes.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::flow::Flow::from_iter(1..4u32).fold(0u32, |a, x| a + x);
    /// # drop(f);
    /// ```
    pub fn fold<A, F>(self, seed: A, f: F) -> Flow<Apply<S, Fold<A, F>>>
    where
        A: Clone + Send + Sync + 'static,
        F: Fn(A, S::Out) -> A + Send + Sync + 'static,
    {
        self.apply(Fold::new(seed, f))
    }

    /// Adds a stage of your own (a [`Stage`]: logic with ports, run by the interpreter), made
    /// by `factory` for each materialisation from its in-port and out-port.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::flow::{ops::Map, Flow, OperatorStage};
    /// let f = Flow::from_iter(0..3u8).via(|i, o| OperatorStage::new(i, o, Map::new(|x: u8| u32::from(x))));
    /// # drop(f);
    /// ```
    pub fn via<U, St, F>(self, factory: F) -> Flow<Via<S, F, U>>
    where
        U: Send + 'static,
        St: Stage + 'static,
        F: Fn(Inlet<S::Out>, Outlet<U>) -> St + Send + Sync + 'static,
    {
        self.with_shape(|s| Via::new(s, factory))
    }

    /// An asynchronous boundary with the default [`BoundaryConfig`]: the steps before it run
    /// on one island, the steps after it on another, joined by a batching boundary (see
    /// [`crate::boundary`] for the contract).
    ///
    /// # Examples
    ///
    /// See [`crate::boundary`].
    pub fn async_boundary(self) -> Flow<Boundary<S>> {
        self.async_boundary_with(BoundaryConfig::new())
    }

    /// An asynchronous boundary set up with `config` (its ring size).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::boundary::BoundaryConfig;
    /// let f = rs_impl::flow::Flow::from_iter(0..3u8).async_boundary_with(BoundaryConfig::new().size(16));
    /// # drop(f);
    /// ```
    pub fn async_boundary_with(self, config: BoundaryConfig) -> Flow<Boundary<S>> {
        self.with_shape(|s| Boundary::new(s, config))
    }

    /// Erases the blueprint's type (to store flows of one element type together, or to build
    /// one in a loop); what follows reaches what precedes through one dynamic call per
    /// element at this point.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::flow::{BoxFlow, Flow};
    /// let mut f: BoxFlow<u64> = Flow::from_iter(0..10u64).boxed();
    /// for k in 0..3 {
    ///     f = f.map(move |x| x + k).boxed();
    /// }
    /// # drop(f);
    /// ```
    pub fn boxed(self) -> BoxFlow<S::Out> {
        self.with_shape(Boxed::new)
    }

    /// The number of islands each materialisation runs: one more than its async boundaries.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::flow::Flow::from_iter(0..3u8).async_boundary().map(|x| x + 1);
    /// assert_eq!(f.islands(), 2);
    /// ```
    pub fn islands(&self) -> usize {
        self.shape.islands()
    }

    /// Sets the islands' budget: events per `poll` before an island yields to its executor.
    ///
    /// # Examples
    ///
    /// ```
    /// let f = rs_impl::flow::Flow::from_iter(0..3u8).with_budget(64);
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
    /// use rs_impl::flow::Flow;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// let island = Flow::from_iter(0..3u8).map(|x| x * 2).into_island(Box::new(s)).unwrap();
    /// futures::executor::block_on(island);
    /// assert_eq!(h.wait().unwrap(), vec![0, 2, 4]);
    /// ```
    pub fn into_island(
        &self,
        subscriber: BoxSubscriber<S::Out>,
    ) -> Result<Island, NotBuilt<S::Out>> {
        let islands = self.islands();
        if islands > 1 {
            return Err(NotBuilt {
                subscriber,
                error: Error::new(BuildError::SeveralIslands { islands }),
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
    /// use rs_impl::flow::Flow;
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
        subscriber: BoxSubscriber<S::Out>,
    ) -> Result<Vec<Island>, NotBuilt<S::Out>> {
        let plan = Plan {
            shape: self.shape.clone(),
            budget: self.budget,
        };
        islands_for(&plan, subscriber)
    }

    /// A publisher that runs this blueprint on `runtime`, its islands afresh for each
    /// subscription.
    ///
    /// # Examples
    ///
    /// See [`Flow`].
    pub fn into_publisher(self, runtime: &Runtime) -> FlowPublisher<S::Out> {
        let plan = Plan {
            shape: self.shape,
            budget: self.budget,
        };
        FlowPublisher::new(StdArc::new(plan), runtime.clone())
    }
}
