//! The plain-publisher forms: [`FlatMap`] (and [`merge`], [`concat_map`](MergeExt::concat_map)
//! as flat maps), and [`MergeExt`], which adds them to every publisher.

use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{BoxSubscriber, Error, Publisher};

use super::core::Core;
use super::inner::Inner;
use super::subscribers::OuterSubscriber;
use super::{Counters, MergeConfig, MergeStats, Shared};
use crate::flow::FlowPublisher;
use crate::island::Runtime;
use crate::panics;
use crate::source::{self, IterPublisher};

/// How a [`FlatMap`] runs its outer: subscribed to, as any publisher (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct OuterSubscribed;

/// How a [`FlatMap`] runs its outer: a known iterator, pulled with its static type (see
/// [`IterPublisher::flat_map`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct OuterPulled;

/// A publisher that maps each element of an outer publisher to an inner stream and merges
/// the inners: [`MergeExt::flat_map`], [`merge`], [`MergeExt::concat_map`]. The contract is
/// in the [module docs](super).
///
/// `D` says how the outer runs: [`OuterSubscribed`] (any publisher), or [`OuterPulled`] (a
/// known iterator, [`IterPublisher::flat_map`]).
#[must_use = "a publisher does nothing until subscribed to"]
pub struct FlatMap<P, F, T, U, D = OuterSubscribed> {
    pub(super) outer: P,
    /// The function and the counters: one block for the publisher, its clones and their
    /// subscriptions.
    pub(super) shared: StdArc<Shared<F>>,
    pub(super) config: MergeConfig,
    _t: PhantomData<fn(T) -> (U, D)>,
}

impl<P: Clone, F, T, U, D> Clone for FlatMap<P, F, T, U, D> {
    fn clone(&self) -> Self {
        FlatMap {
            outer: self.outer.clone(),
            shared: self.shared.clone(),
            config: self.config,
            _t: PhantomData,
        }
    }
}

impl<P, F, T, U, D> fmt::Debug for FlatMap<P, F, T, U, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlatMap")
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<P, F, T, U, D> FlatMap<P, F, T, U, D> {
    pub(crate) fn new(outer: P, f: F, config: MergeConfig) -> Self {
        FlatMap {
            outer,
            shared: StdArc::new(Shared {
                f,
                counters: Counters::default(),
            }),
            config: config.checked(),
            _t: PhantomData,
        }
    }

    /// What every subscription of this publisher (and of its clones) did so far: inner
    /// subscriptions, queues made, drain passes, elements on the fast path. Drain passes and
    /// fast-path elements are added when a subscription ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::merge::MergeExt;
    /// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
    ///
    /// let p = source::range(0u64..3).flat_map(|i| source::range(i * 10..i * 10 + 2), 4, 16);
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap().len(), 6);
    /// let stats = p.stats();
    /// assert_eq!(stats.inner_subscriptions, 0); // known iterators: no subscription
    /// assert_eq!(stats.queues, 0);
    /// ```
    pub fn stats(&self) -> MergeStats {
        self.shared.counters.snapshot()
    }

    /// The configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::merge::{MergeConfig, MergeExt};
    /// let p = rs_impl::source::range(0u8..3).concat_map(|i| Some(i), 8);
    /// assert_eq!(p.config().max_concurrency, 1);
    /// # let _ = MergeConfig::new();
    /// ```
    pub fn config(&self) -> MergeConfig {
        self.config
    }
}

impl<P, F, T, U, I> Publisher<U> for FlatMap<P, F, T, U, OuterSubscribed>
where
    P: Publisher<T>,
    T: Send + 'static,
    U: Send + 'static,
    I: Inner<U>,
    F: Fn(T) -> I + Send + Sync + 'static,
{
    fn subscribe(&self, subscriber: BoxSubscriber<U>) {
        let core = Core::start(subscriber, self.config, self.shared.clone());
        if core.is_cancelled() {
            return; // cancelled (or panicked) in `on_subscribe`
        }
        let outer = OuterSubscriber::new(core.clone(), self.shared.clone());
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| {
            self.outer.subscribe(Box::new(outer));
        })) {
            let e = Error::msg(format!(
                "the outer publisher panicked in subscribe: {}",
                panics::panic_message(&*p)
            ));
            core.error(e, true);
        }
    }
}

/// The inners of a [`merge`]: shared by every subscription, iterated by clone.
#[derive(Debug)]
pub struct Inners<I>(StdArc<[I]>);

impl<I> Inners<I> {
    pub(crate) fn new(inners: StdArc<[I]>) -> Self {
        Inners(inners)
    }
}

impl<I> Clone for Inners<I> {
    fn clone(&self) -> Self {
        Inners(self.0.clone())
    }
}

impl<I: Clone> IntoIterator for Inners<I> {
    type Item = I;
    type IntoIter = InnersIter<I>;
    fn into_iter(self) -> InnersIter<I> {
        InnersIter { inners: self, i: 0 }
    }
}

/// The iterator of [`Inners`].
#[derive(Debug)]
pub struct InnersIter<I> {
    inners: Inners<I>,
    i: usize,
}

impl<I: Clone> Iterator for InnersIter<I> {
    type Item = I;
    fn next(&mut self) -> Option<I> {
        let x = self.inners.0.get(self.i)?.clone();
        self.i += 1;
        Some(x)
    }
}

/// The identity, as [`merge`]'s function.
pub type Identity<I> = fn(I) -> I;

/// A [`merge`]: a flat map of the given inners with the identity (the inners pulled, not
/// published: [`OuterPulled`]).
pub type Merge<I, U> = FlatMap<IterPublisher<Inners<I>>, Identity<I>, I, U, OuterPulled>;

/// Merges a fixed set of inner streams (publishers, values, iterators: see [`Inner`]), all
/// subscribed at once, with the default prefetch; elements are interleaved as they arrive.
///
/// # Examples
///
/// ```
/// use rs_api::{BoxPublisher, Publisher};
/// use rs_impl::{merge, source, subscriber::{collect, RequestStrategy}};
///
/// let p = merge::merge(vec![source::range(0u32..3), source::range(10u32..13)]);
/// let (s, h) = collect(RequestStrategy::Prefetch(2));
/// p.subscribe(Box::new(s));
/// let mut seen = h.wait().unwrap();
/// seen.sort();
/// assert_eq!(seen, vec![0, 1, 2, 10, 11, 12]);
/// ```
pub fn merge<U, I, It>(inners: It) -> Merge<I, U>
where
    It: IntoIterator<Item = I>,
    I: Inner<U> + Clone + Sync,
    U: Send + 'static,
{
    let inners: StdArc<[I]> = inners.into_iter().collect();
    let config = MergeConfig::new().max_concurrency(inners.len().max(1));
    FlatMap::new(
        source::from_iter(Inners(inners)),
        (|i| i) as Identity<I>,
        config,
    )
}

/// [`merge`] with a configuration of your own (its `max_concurrency` bounds the inners
/// subscribed at once).
///
/// # Examples
///
/// ```
/// use rs_impl::merge::{merge_with, MergeConfig};
/// let p = merge_with(vec![rs_impl::source::just(1u8)], MergeConfig::new().prefetch(16));
/// # drop(p);
/// ```
pub fn merge_with<U, I, It>(inners: It, config: MergeConfig) -> Merge<I, U>
where
    It: IntoIterator<Item = I>,
    I: Inner<U> + Clone + Sync,
    U: Send + 'static,
{
    let inners: StdArc<[I]> = inners.into_iter().collect();
    FlatMap::new(
        source::from_iter(Inners(inners)),
        (|i| i) as Identity<I>,
        config,
    )
}

/// `flat_map`, `concat_map` and `observe_on` for every publisher (the plain-publisher forms;
/// a [`Flow`](crate::flow::Flow) has the same operators, run on its islands).
pub trait MergeExt<T>: Publisher<T> + Sized {
    /// Maps each element to an inner stream ([`Inner`]) and merges the inners, at most
    /// `max_concurrency` of them subscribed at once, each prefetching `prefetch` elements and
    /// replenishing every `prefetch / 4` taken. See the [module docs](super) for the contract.
    ///
    /// # Panics
    ///
    /// If `max_concurrency` or `prefetch` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::merge::MergeExt;
    /// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
    ///
    /// let p = source::range(1u64..=3).flat_map(|n| source::range(0..n), 2, 32);
    /// let (s, h) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap().len(), 1 + 2 + 3);
    /// ```
    fn flat_map<U, I, F>(
        self,
        f: F,
        max_concurrency: usize,
        prefetch: usize,
    ) -> FlatMap<Self, F, T, U>
    where
        I: Inner<U>,
        F: Fn(T) -> I + Send + Sync + 'static,
    {
        let config = MergeConfig::new()
            .max_concurrency(max_concurrency)
            .prefetch(prefetch);
        FlatMap::new(self, f, config)
    }

    /// [`flat_map`](MergeExt::flat_map) with a full configuration (errors delayed or not).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::merge::{MergeConfig, MergeExt};
    /// let p = rs_impl::source::range(0u8..4)
    ///     .flat_map_with(|i| Some(i), MergeConfig::new().delay_errors(true));
    /// # drop(p);
    /// ```
    fn flat_map_with<U, I, F>(self, f: F, config: MergeConfig) -> FlatMap<Self, F, T, U>
    where
        I: Inner<U>,
        F: Fn(T) -> I + Send + Sync + 'static,
    {
        FlatMap::new(self, f, config)
    }

    /// Maps each element to an inner stream and concatenates them in order: one inner at a
    /// time (a flat map with `max_concurrency` 1), each prefetching `prefetch`.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::merge::MergeExt;
    /// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
    ///
    /// let p = source::range(0u32..3).concat_map(|i| source::range(i * 10..i * 10 + 2), 8);
    /// let (s, h) = collect(RequestStrategy::OneByOne);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![0, 1, 10, 11, 20, 21]);
    /// ```
    fn concat_map<U, I, F>(self, f: F, prefetch: usize) -> FlatMap<Self, F, T, U>
    where
        I: Inner<U>,
        F: Fn(T) -> I + Send + Sync + 'static,
    {
        FlatMap::new(
            self,
            f,
            MergeConfig::new().max_concurrency(1).prefetch(prefetch),
        )
    }

    /// Delivers this publisher's signals on `runtime`: its elements go through a queue of
    /// `prefetch` (rounded up to a power of two), replenished once 75 % of it was taken, and
    /// an island on `runtime` hands them to the subscriber. See
    /// [`observe_on`](super::observe_on).
    ///
    /// # Panics
    ///
    /// If `prefetch` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::merge::MergeExt;
    /// use rs_impl::{source, subscriber::{collect, RequestStrategy}, Runtime};
    ///
    /// let runtime = Runtime::with_threads(1).unwrap();
    /// let p = source::range(0u32..100).observe_on(&runtime, 16);
    /// let (s, h) = collect(RequestStrategy::Prefetch(8));
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap().len(), 100);
    /// ```
    fn observe_on(self, runtime: &Runtime, prefetch: usize) -> FlowPublisher<T>
    where
        Self: Send + Sync + 'static,
        T: Send + 'static,
    {
        super::observe_on(self, runtime, prefetch)
    }
}

impl<T, P: Publisher<T>> MergeExt<T> for P {}
