//! The merge operators of a [`Flow`]: `flat_map`, `concat_map`, `Flow::merge` (a fan-in
//! stage inside the island: [`MergeStage`]) and `observe_on` (an async boundary whose
//! downstream islands run on another runtime).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc as StdArc;

use super::inner::Inner;
use super::observe_on::observe_on_batch;
use super::publisher::{Inners, InnersIter};
use super::stage::MergeStage;
use super::MergeConfig;
use crate::boundary::{Producer, Shared};
use crate::flow::{
    Build, Exit, Flow, FromIter, PortExit, RingEntry, RingExit, RingIn, RingOut, Shape,
};
use crate::island::{BuildError, Runtime, SpawnOn};

/// A flow's `flat_map`: the part before it ends in an out-port feeding the fan-in stage, which
/// drives the exit after it.
pub struct FlatMapShape<S, F, U> {
    inner: S,
    f: StdArc<F>,
    config: MergeConfig,
    _u: PhantomData<fn() -> U>,
}

impl<S: Clone, F, U> Clone for FlatMapShape<S, F, U> {
    fn clone(&self) -> Self {
        FlatMapShape {
            inner: self.inner.clone(),
            f: self.f.clone(),
            config: self.config,
            _u: PhantomData,
        }
    }
}

impl<S: fmt::Debug, F, U> fmt::Debug for FlatMapShape<S, F, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlatMapShape")
            .field("inner", &self.inner)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<S, F, U, I> Shape for FlatMapShape<S, F, U>
where
    S: Shape,
    U: Send + 'static,
    I: Inner<U>,
    F: Fn(S::Out) -> I + Send + Sync + 'static,
{
    type Out = U;

    fn place<X: Exit<U> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let (o, i) = b.graph.connection::<S::Out>();
        self.inner.place(b, PortExit::new(o))?;
        b.graph
            .add_stage(MergeStage::new(i, exit, self.f.clone(), self.config));
        Ok(())
    }

    fn islands(&self) -> usize {
        self.inner.islands()
    }
}

/// A flow's `observe_on`: an async boundary of `prefetch` (replenished at 75 %) after which
/// every island runs on `runtime`.
pub struct ObserveOnShape<S> {
    inner: S,
    prefetch: usize,
    spawn_on: SpawnOn,
}

impl<S: Clone> Clone for ObserveOnShape<S> {
    fn clone(&self) -> Self {
        ObserveOnShape {
            inner: self.inner.clone(),
            prefetch: self.prefetch,
            spawn_on: self.spawn_on.clone(),
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for ObserveOnShape<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObserveOnShape")
            .field("inner", &self.inner)
            .field("prefetch", &self.prefetch)
            .finish_non_exhaustive()
    }
}

impl<S: Shape> Shape for ObserveOnShape<S> {
    type Out = S::Out;

    fn place<X: Exit<S::Out> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let shared = Shared::<S::Out>::new(self.prefetch);
        {
            let mut control = shared.control();
            shared.claim(Producer::Internal, &mut control);
        }
        shared.claim_consumer();
        let size = shared.size();
        self.inner
            .place(b, RingExit(RingOut::new(shared.clone(), (size / 2).max(1))))?;
        b.end_island()?;
        b.spawn_on = Some(self.spawn_on.clone());
        let ring = RingIn::with_batch(shared, None, observe_on_batch(size));
        b.segment(RingEntry::new(ring), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        self.inner.islands() + 1
    }
}

/// The shape of [`Flow::merge`].
pub type MergeShape<I, U> = FlatMapShape<FromIter<Inners<I>>, fn(I) -> I, U>;

impl<I, U> Flow<MergeShape<I, U>>
where
    I: Inner<U> + Clone + Sync,
    U: Send + 'static,
    InnersIter<I>: Send,
{
    /// A flow of the elements of `inners` (publishers, values, iterators: [`Inner`]), all
    /// run at once inside the island and merged as they arrive; each subscribed inner
    /// prefetches [`DEFAULT_PREFETCH`](super::DEFAULT_PREFETCH).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, source, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(1).unwrap();
    /// let p = Flow::merge(vec![source::range(0u32..3), source::range(10u32..13)])
    ///     .map(|x| x * 2)
    ///     .into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// let mut seen = h.wait().unwrap();
    /// seen.sort();
    /// assert_eq!(seen, vec![0, 2, 4, 20, 22, 24]);
    /// ```
    pub fn merge<It: IntoIterator<Item = I>>(inners: It) -> Self {
        let inners: StdArc<[I]> = inners.into_iter().collect();
        let config = MergeConfig::new().max_concurrency(inners.len().max(1));
        Flow::from_iter(Inners::new(inners)).with_shape(|s| FlatMapShape {
            inner: s,
            f: StdArc::new((|i| i) as fn(I) -> I),
            config,
            _u: PhantomData,
        })
    }
}

impl<S: Shape> Flow<S> {
    /// Maps each element to an inner stream ([`Inner`]) and merges the inners inside the
    /// island (the interpreter's fan-in: no thread per inner), at most `max_concurrency` at
    /// once, each subscribed inner prefetching `prefetch` and replenished every
    /// `prefetch / 4`. Known values and iterators are served without a subscription; a
    /// subscribed inner queues what it sends in its own queue (made on its first element)
    /// and posts to the island. The contract is the one of [`crate::merge`], delivered by the
    /// island (see [`Flow`]).
    ///
    /// # Panics
    ///
    /// If `max_concurrency` or `prefetch` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, source, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(1).unwrap();
    /// let p = Flow::from_iter(1u64..=4)
    ///     .flat_map(|n| source::range(0..n), 2, 16)
    ///     .into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::Prefetch(3));
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap().len(), 1 + 2 + 3 + 4);
    /// ```
    pub fn flat_map<U, I, F>(
        self,
        f: F,
        max_concurrency: usize,
        prefetch: usize,
    ) -> Flow<FlatMapShape<S, F, U>>
    where
        U: Send + 'static,
        I: Inner<U>,
        F: Fn(S::Out) -> I + Send + Sync + 'static,
    {
        let config = MergeConfig::new()
            .max_concurrency(max_concurrency)
            .prefetch(prefetch);
        self.flat_map_with(f, config)
    }

    /// [`flat_map`](Flow::flat_map) with a full configuration (errors delayed or not).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::{flow::Flow, merge::MergeConfig};
    /// let f = Flow::from_iter(0..3u8).flat_map_with(|x| Some(x), MergeConfig::new());
    /// # drop(f);
    /// ```
    pub fn flat_map_with<U, I, F>(self, f: F, config: MergeConfig) -> Flow<FlatMapShape<S, F, U>>
    where
        U: Send + 'static,
        I: Inner<U>,
        F: Fn(S::Out) -> I + Send + Sync + 'static,
    {
        let config = config.checked();
        self.with_shape(|s| FlatMapShape {
            inner: s,
            f: StdArc::new(f),
            config,
            _u: PhantomData,
        })
    }

    /// Maps each element to an inner stream and concatenates them in order, one inner at a
    /// time (a `flat_map` with `max_concurrency` 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, source, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let runtime = Runtime::with_threads(1).unwrap();
    /// let p = Flow::from_iter(0u32..3)
    ///     .concat_map(|i| source::range(i * 10..i * 10 + 2), 8)
    ///     .into_publisher(&runtime);
    /// let (s, h) = collect(RequestStrategy::OneByOne);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![0, 1, 10, 11, 20, 21]);
    /// ```
    pub fn concat_map<U, I, F>(self, f: F, prefetch: usize) -> Flow<FlatMapShape<S, F, U>>
    where
        U: Send + 'static,
        I: Inner<U>,
        F: Fn(S::Out) -> I + Send + Sync + 'static,
    {
        self.flat_map(f, 1, prefetch)
    }

    /// Runs everything after this point on `runtime`: an async boundary (a ring of
    /// `prefetch`, rounded up to a power of two, replenished once three quarters of it were
    /// taken) whose downstream islands a flow publisher spawns on `runtime` instead of its
    /// own, up to the next `observe_on`. (Islands taken with
    /// [`into_islands`](Flow::into_islands) are yours to spawn.)
    ///
    /// # Panics
    ///
    /// If `prefetch` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{flow::Flow, Runtime};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    ///
    /// let producer = Runtime::with_threads(1).unwrap();
    /// let consumer = Runtime::with_threads(1).unwrap();
    /// let p = Flow::from_iter(0u64..1000)
    ///     .observe_on(&consumer, 64)
    ///     .map(|x| x + 1)
    ///     .into_publisher(&producer);
    /// assert_eq!(p_len(p), 1000);
    /// # fn p_len(p: rs_impl::FlowPublisher<u64>) -> usize {
    /// #     let (s, h) = collect(RequestStrategy::Unbounded);
    /// #     p.subscribe(Box::new(s));
    /// #     h.wait().unwrap().len()
    /// # }
    /// ```
    pub fn observe_on(self, runtime: &Runtime, prefetch: usize) -> Flow<ObserveOnShape<S>> {
        assert!(
            prefetch > 0,
            "Flow::observe_on: the prefetch must be at least one element"
        );
        let runtime = runtime.clone();
        let spawn_on: SpawnOn = StdArc::new(move |island| runtime.spawn(island));
        self.with_shape(|s| ObserveOnShape {
            inner: s,
            prefetch,
            spawn_on,
        })
    }
}
