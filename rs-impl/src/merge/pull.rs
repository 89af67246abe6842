//! The pulled outer: a flat map or merge whose outer is a known iterator
//! ([`source::range`](crate::source::range), [`source::from_iter`](crate::source::from_iter),
//! the inners of [`merge`](super::merge)) is not subscribed to. Its iterator is pulled with
//! its static type by the merge's own outer subscription, as many elements as the merge asks
//! for, and — while nobody else drains — every value and known iterator those elements map to
//! is delivered inside **one** hold of the drain (no drain entry and exit per inner, no
//! `on_next` hop to an outer subscriber). An inner that must be subscribed is started outside
//! the drain, as with a subscribed outer; when another thread drains, each element goes the
//! subscribed outer's way.

use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{BoxSubscriber, Error, Publisher, Subscription};

use super::core::{Core, State, ValueRun};
use super::inner::{Inner, InnerSource, InnerVisitor};
use super::publisher::{FlatMap, OuterPulled};
use super::subscribers::start_inner;
use super::typed::Start;
use super::MergeConfig;
use super::Shared;
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::Mutex;
use crate::panics;
use crate::source::IterPublisher;

/// Flat maps of a known iterator: the same operators as [`MergeExt`](super::MergeExt)'s,
/// with the outer pulled instead of subscribed to (the [module docs](super) hold the
/// contract, which is the same).
impl<It> IterPublisher<It>
where
    It: IntoIterator + Clone,
    It::IntoIter: Send + 'static,
    It::Item: Send + 'static,
{
    /// [`MergeExt::flat_map`](super::MergeExt::flat_map) with this iterator pulled as the
    /// outer: the same contract, less work per outer element.
    ///
    /// # Panics
    ///
    /// If `max_concurrency` or `prefetch` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
    ///
    /// let p = source::range(0u64..3).flat_map(source::just, 128, 128);
    /// let (s, h) = collect(RequestStrategy::OneByOne);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![0, 1, 2]);
    /// assert_eq!(p.stats().inner_subscriptions, 0);
    /// ```
    pub fn flat_map<U, I, F>(
        self,
        f: F,
        max_concurrency: usize,
        prefetch: usize,
    ) -> FlatMap<Self, F, It::Item, U, OuterPulled>
    where
        I: Inner<U>,
        F: Fn(It::Item) -> I + Send + Sync + 'static,
    {
        let config = MergeConfig::new()
            .max_concurrency(max_concurrency)
            .prefetch(prefetch);
        FlatMap::new(self, f, config)
    }

    /// [`MergeExt::flat_map_with`](super::MergeExt::flat_map_with) with this iterator pulled
    /// as the outer.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::merge::MergeConfig;
    /// let p = rs_impl::source::range(0u8..4)
    ///     .flat_map_with(|i| Some(i), MergeConfig::new().delay_errors(true));
    /// # drop(p);
    /// ```
    pub fn flat_map_with<U, I, F>(
        self,
        f: F,
        config: MergeConfig,
    ) -> FlatMap<Self, F, It::Item, U, OuterPulled>
    where
        I: Inner<U>,
        F: Fn(It::Item) -> I + Send + Sync + 'static,
    {
        FlatMap::new(self, f, config)
    }

    /// [`MergeExt::concat_map`](super::MergeExt::concat_map) with this iterator pulled as the
    /// outer.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
    ///
    /// let p = source::range(0u32..3).concat_map(|i| source::range(i * 10..i * 10 + 2), 8);
    /// let (s, h) = collect(RequestStrategy::OneByOne);
    /// p.subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![0, 1, 10, 11, 20, 21]);
    /// ```
    pub fn concat_map<U, I, F>(
        self,
        f: F,
        prefetch: usize,
    ) -> FlatMap<Self, F, It::Item, U, OuterPulled>
    where
        I: Inner<U>,
        F: Fn(It::Item) -> I + Send + Sync + 'static,
    {
        FlatMap::new(
            self,
            f,
            MergeConfig::new().max_concurrency(1).prefetch(prefetch),
        )
    }
}

impl<It, F, T, U, I> Publisher<U> for FlatMap<IterPublisher<It>, F, T, U, OuterPulled>
where
    It: IntoIterator<Item = T> + Clone,
    It::IntoIter: Send + 'static,
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
        let outer = self.outer.clone();
        let iter = match catch_unwind(AssertUnwindSafe(|| outer.into_iterable().into_iter())) {
            Ok(iter) => iter,
            Err(p) => {
                let e = Error::msg(format!(
                    "the outer iterator panicked when made: {}",
                    panics::panic_message(&*p)
                ));
                core.error(e, true);
                return;
            }
        };
        let pulled = StdArc::new(PulledOuter {
            core: core.clone(),
            shared: self.shared.clone(),
            iter: Mutex::new(Some(iter)),
            cancelled: AtomicBool::new(false),
            _t: PhantomData,
        });
        core.outer_subscribed(pulled);
    }
}

/// The outer subscription of a pulled outer: its iterator, pulled on `request`.
struct PulledOuter<J, F, T, U> {
    core: StdArc<Core<U>>,
    /// The function (with the publisher's counters).
    shared: StdArc<Shared<F>>,
    /// Requests come serially (the core makes them under its own guard); `cancel` does not
    /// take this lock (it may come from inside a `request`, through the drain).
    iter: Mutex<Option<J>>,
    cancelled: AtomicBool,
    _t: PhantomData<fn(T)>,
}

/// What one element of the outer came to.
enum Step<U> {
    /// Delivered or kept by the drain.
    Done,
    /// An inner to subscribe to, outside the drain.
    Start(InnerSource<U>),
    /// The outer ended (its iterator ended, or it or the function panicked: the error is
    /// recorded).
    Ended,
    /// The outer's iterator ended with the drain held: the end is recorded already, and the
    /// pass that follows sees it (no drain entry of its own for the completion).
    EndedHeld,
}

impl<J, F, T, U, I> PulledOuter<J, F, T, U>
where
    J: Iterator<Item = T> + Send + 'static,
    T: Send + 'static,
    U: Send + 'static,
    I: Inner<U>,
    F: Fn(T) -> I + Send + Sync + 'static,
{
    /// The next element of the outer, mapped; `None` when the outer ended (an error recorded).
    fn next_inner(&self, iter: &mut J) -> Option<I> {
        match catch_unwind(AssertUnwindSafe(|| iter.next().map(|t| (self.shared.f)(t)))) {
            Ok(Some(i)) => Some(i),
            Ok(None) => None,
            Err(p) => {
                let e = Error::msg(format!(
                    "the merge's function or its outer iterator panicked: {}",
                    panics::panic_message(&*p)
                ));
                self.core.error(e, true);
                None
            }
        }
    }

    /// With the drain held: up to `*left` elements, until one needs a subscription.
    ///
    /// Values go in runs ([`ValueRun`]): the demand, the waiting values and the outer's
    /// replenish batch are looked at once per run, and the counts added once per run, so that
    /// a value costs its mapping, its `on_next` and a read of the cancel flag (rule 1.8).
    fn pull_held(&self, st: &mut State<U>, iter: &mut J, left: &mut u64) -> Step<U> {
        let mut run = ValueRun::default();
        let mut n = *left;
        let step = self.pull_runs(st, iter, &mut n, &mut run);
        self.core.settle_run(st, &mut run);
        *left = n;
        step
    }

    /// [`pull_held`](Self::pull_held)'s loop (its caller settles the last run).
    #[inline(always)]
    fn pull_runs(
        &self,
        st: &mut State<U>,
        iter: &mut J,
        left: &mut u64,
        run: &mut ValueRun,
    ) -> Step<U> {
        while *left > 0 {
            if self.core.cancelled_meanwhile() || (run.left == 0 && st.finished()) {
                return Step::Done;
            }
            if run.left == 0 {
                self.core.settle_run(st, run);
                run.left = self.core.value_run(st, *left);
                run.granted = run.left;
            }
            let Some(inner) = self.next_inner(iter) else {
                self.core.settle_run(st, run);
                self.core.outer_complete_held();
                return Step::EndedHeld;
            };
            *left -= 1;
            let held = Held {
                core: &self.core,
                st: &mut *st,
                run: *run,
            };
            // The value of a run is delivered here, outside the visit's `catch_unwind` (whose
            // captures live in memory): the run's counter stays in a register.
            match catch_unwind(AssertUnwindSafe(|| inner.visit(held))) {
                Ok(Took::Value(u)) => {
                    run.left -= 1;
                    if let Err(p) = st.out.emit_uncounted(u) {
                        self.core.settle_run(st, run);
                        self.core.subscriber_panicked(st, p);
                    }
                }
                Ok(Took::Done) => {}
                Ok(Took::Settled) => *run = ValueRun::default(),
                Ok(Took::Start(source)) => return Step::Start(source),
                Err(p) => {
                    self.core.settle_run(st, run);
                    let e = Error::msg(format!(
                        "an inner panicked when made: {}",
                        panics::panic_message(&*p)
                    ));
                    self.core.error(e, true);
                    return Step::Ended;
                }
            }
        }
        Step::Done
    }

    /// Without the drain: one element, the subscribed outer's way.
    fn pull_one(&self, iter: &mut J, left: &mut u64) -> Step<U> {
        let Some(inner) = self.next_inner(iter) else {
            return Step::Ended;
        };
        *left -= 1;
        match catch_unwind(AssertUnwindSafe(|| inner.visit(Start(&self.core)))) {
            Ok(None) => Step::Done,
            Ok(Some(source)) => Step::Start(source),
            Err(p) => {
                let e = Error::msg(format!(
                    "an inner panicked when made: {}",
                    panics::panic_message(&*p)
                ));
                self.core.error(e, true);
                Step::Ended
            }
        }
    }
}

impl<J, F, T, U, I> Subscription for PulledOuter<J, F, T, U>
where
    J: Iterator<Item = T> + Send + 'static,
    T: Send + 'static,
    U: Send + 'static,
    I: Inner<U>,
    F: Fn(T) -> I + Send + Sync + 'static,
{
    fn request(&self, n: u64) {
        let mut slot = self.iter.lock();
        let Some(iter) = slot.as_mut() else { return };
        let mut left = n;
        while left > 0 {
            if self.cancelled.load(Ordering::Acquire) || self.core.is_cancelled() {
                panics::drop_guarded(slot.take());
                return;
            }
            let mut step = Step::Done;
            let held = self.core.drain.try_drain_with(
                (),
                |st, ()| step = self.pull_held(st, iter, &mut left),
                |st| self.core.pass(st),
            );
            if held.is_err() {
                step = self.pull_one(iter, &mut left);
            } else {
                // What the drain gave back to the outer (ended inners, delivered values) is
                // asked for by the flush this request runs under (or by this call, if none).
                self.core.after_fast();
            }
            match step {
                // Left early only for a cancel or an end, which the next round sees.
                Step::Done => {}
                Step::Start(source) => start_inner(&self.core, source),
                Step::Ended => {
                    panics::drop_guarded(slot.take());
                    self.core.outer_complete();
                    return;
                }
                Step::EndedHeld => {
                    panics::drop_guarded(slot.take());
                    return;
                }
            }
        }
    }

    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// What [`Held`] made of an inner.
enum Took<U> {
    /// A value the run has room for: the pull loop delivers it.
    Value(U),
    /// Served (delivered, kept or nothing).
    Done,
    /// Served after the run was settled (a known iterator, which may use the run's demand):
    /// the pull loop starts a new run.
    Settled,
    /// An inner to subscribe to, outside the drain.
    Start(InnerSource<U>),
}

/// Takes an inner with the drain held: values and known iterators are served at once;
/// anything else comes back to be subscribed to outside the drain.
struct Held<'a, U> {
    core: &'a Core<U>,
    st: &'a mut State<U>,
    /// A copy of the pull loop's run: a value goes back to the loop while it has room; the
    /// run is settled before a known iterator is served.
    run: ValueRun,
}

impl<U: Send + 'static> Held<'_, U> {
    /// A known iterator, after the run was settled (the typed lane reads the counts).
    #[inline]
    fn typed<J>(mut self, iter: J) -> Took<U>
    where
        J: Iterator<Item = U> + Send + 'static,
    {
        self.core.settle_run(self.st, &mut self.run);
        self.core.admit_typed(self.st, iter);
        Took::Settled
    }
}

impl<U: Send + 'static> InnerVisitor<U> for Held<'_, U> {
    type Out = Took<U>;

    fn iter<J>(mut self, iterable: J) -> Self::Out
    where
        J: IntoIterator<Item = U>,
        J::IntoIter: Send + 'static,
    {
        match catch_unwind(AssertUnwindSafe(|| iterable.into_iter())) {
            Ok(iter) => self.typed(iter),
            Err(p) => {
                self.core.settle_run(self.st, &mut self.run);
                self.core.iterator_panicked(p);
                self.core.empty_held();
                Took::Settled
            }
        }
    }

    // Inlined into the pull loop, where the source's kind is known: a value is taken without
    // the enum ever being built.
    #[inline(always)]
    fn source(self, source: InnerSource<U>) -> Self::Out {
        match source {
            InnerSource::Just(u) if self.run.left > 0 => return Took::Value(u),
            InnerSource::Just(u) => self.core.take_value(self.st, u),
            InnerSource::Empty => self.core.empty_held(),
            InnerSource::Iter(iter) => return self.typed(iter),
            source @ InnerSource::Publisher(_) => return Took::Start(source),
        }
        Took::Done
    }
}
