//! Built-in stages: identity, map, filter, take, skip (Pekko's `drop`), scan, fold, an
//! iterator source, a `Stream` source and a collecting sink.
//!
//! Each is one interpreter stage with one in-port and one out-port (sources and sinks: one
//! port). They are what [`Flow`](super::Flow)'s methods add, and they can be wired by hand with
//! a [`GraphBuilder`](super::GraphBuilder) (the stress tests build million-stage chains that
//! way). Every stage forwards demand one element at a time: a pull from downstream becomes at
//! most one pull upstream, so nothing is buffered inside an island beyond one element per
//! connection.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures::Stream;
use rs_api::Error;

use super::fused::{self, Cont, Fusable};
use super::stage::{Ctx, Inlet, Outlet, PortId, Ports, Stage};
use crate::loom::sync::{Arc, Mutex};

macro_rules! debug_stage {
    ($name:ident < $($g:ident),* >) => {
        impl<$($g),*> fmt::Debug for $name<$($g),*> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    };
}

/// Passes every element through unchanged (the stage of seed 002's benchmark).
pub struct Identity<T> {
    inlet: Inlet<T>,
    outlet: Outlet<T>,
}
debug_stage!(Identity<T>);

impl<T> Identity<T> {
    /// An identity stage between `inlet` and `outlet`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, i) = g.connection::<u8>();
    /// g.add_stage(rs_impl::island::stages::Identity::new(i, o));
    /// ```
    pub fn new(inlet: Inlet<T>, outlet: Outlet<T>) -> Self {
        Identity { inlet, outlet }
    }
}

impl<T: Send + 'static> Stage for Identity<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn into_fusable(self) -> Result<Fusable, Self> {
        let (i, o) = (self.inlet, self.outlet);
        Ok(Fusable::new(self, i, o, |_, next: Cont<T>| {
            fused::identity_cont(next)
        }))
    }
    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        ctx.push(self.outlet, x);
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

/// Applies a function to every element.
pub struct Map<A, B, F> {
    inlet: Inlet<A>,
    outlet: Outlet<B>,
    f: F,
}
debug_stage!(Map<A, B, F>);

impl<A, B, F: FnMut(A) -> B> Map<A, B, F> {
    /// A stage emitting `f(x)` for every `x`.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](super::GraphBuilder).
    pub fn new(inlet: Inlet<A>, outlet: Outlet<B>, f: F) -> Self {
        Map { inlet, outlet, f }
    }
}

impl<A, B, F> Stage for Map<A, B, F>
where
    A: Send + 'static,
    B: Send + 'static,
    F: FnMut(A) -> B + Send + 'static,
{
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn into_fusable(self) -> Result<Fusable, Self> {
        let (i, o) = (self.inlet, self.outlet);
        Ok(Fusable::new(self, i, o, |s: Self, next: Cont<B>| {
            fused::map_cont(s.f, next)
        }))
    }
    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        let y = (self.f)(x);
        ctx.push(self.outlet, y);
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

/// Passes the elements for which a predicate holds; pulls again for the others.
pub struct Filter<T, F> {
    inlet: Inlet<T>,
    outlet: Outlet<T>,
    f: F,
}
debug_stage!(Filter<T, F>);

impl<T, F: FnMut(&T) -> bool> Filter<T, F> {
    /// A stage keeping the elements `x` with `f(&x)`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, i) = g.connection::<u8>();
    /// g.add_stage(rs_impl::island::stages::Filter::new(i, o, |x: &u8| x % 2 == 0));
    /// ```
    pub fn new(inlet: Inlet<T>, outlet: Outlet<T>, f: F) -> Self {
        Filter { inlet, outlet, f }
    }
}

impl<T, F> Stage for Filter<T, F>
where
    T: Send + 'static,
    F: FnMut(&T) -> bool + Send + 'static,
{
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn into_fusable(self) -> Result<Fusable, Self> {
        let (i, o) = (self.inlet, self.outlet);
        Ok(Fusable::new(self, i, o, |s: Self, next: Cont<T>| {
            fused::filter_cont(s.f, next)
        }))
    }
    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        if (self.f)(&x) {
            ctx.push(self.outlet, x);
        } else {
            ctx.pull(self.inlet);
        }
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

/// Passes the first `n` elements, then completes downstream and cancels upstream (the stage
/// that completes early, so cascades run in both directions).
pub struct Take<T> {
    inlet: Inlet<T>,
    outlet: Outlet<T>,
    left: u64,
}
debug_stage!(Take<T>);

impl<T> Take<T> {
    /// A stage passing `n` elements. `n == 0` completes at start.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, i) = g.connection::<u8>();
    /// g.add_stage(rs_impl::island::stages::Take::new(i, o, 3));
    /// ```
    pub fn new(inlet: Inlet<T>, outlet: Outlet<T>, n: u64) -> Self {
        Take {
            inlet,
            outlet,
            left: n,
        }
    }
}

impl<T: Send + 'static> Stage for Take<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    /// Fusable when `n > 0` (`take(0)` completes at start, a stage of its own).
    fn into_fusable(self) -> Result<Fusable, Self> {
        if self.left == 0 {
            return Err(self);
        }
        let (i, o) = (self.inlet, self.outlet);
        Ok(Fusable::new(self, i, o, |s: Self, next: Cont<T>| {
            fused::take_cont(s.left, next)
        }))
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        if self.left == 0 {
            ctx.complete_stage();
        }
    }
    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        self.left -= 1;
        ctx.push(self.outlet, x);
        if self.left == 0 {
            ctx.complete_stage();
        }
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

/// Drops the first `n` elements, then passes the rest (Pekko's `drop`).
pub struct Skip<T> {
    inlet: Inlet<T>,
    outlet: Outlet<T>,
    left: u64,
}
debug_stage!(Skip<T>);

impl<T> Skip<T> {
    /// A stage dropping `n` elements.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, i) = g.connection::<u8>();
    /// g.add_stage(rs_impl::island::stages::Skip::new(i, o, 1));
    /// ```
    pub fn new(inlet: Inlet<T>, outlet: Outlet<T>, n: u64) -> Self {
        Skip {
            inlet,
            outlet,
            left: n,
        }
    }
}

impl<T: Send + 'static> Stage for Skip<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn into_fusable(self) -> Result<Fusable, Self> {
        let (i, o) = (self.inlet, self.outlet);
        Ok(Fusable::new(self, i, o, |s: Self, next: Cont<T>| {
            fused::skip_cont(s.left, next)
        }))
    }
    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        if self.left > 0 {
            self.left -= 1;
            drop(x);
            ctx.pull(self.inlet);
        } else {
            ctx.push(self.outlet, x);
        }
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

/// Emits the running accumulation `acc = f(acc, x)` after each element (not the seed).
pub struct Scan<A, S, F> {
    inlet: Inlet<A>,
    outlet: Outlet<S>,
    acc: S,
    f: F,
}
debug_stage!(Scan<A, S, F>);

impl<A, S: Clone, F: FnMut(&S, A) -> S> Scan<A, S, F> {
    /// A stage emitting `f(&acc, x)` for each `x`, starting from `seed`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, i) = g.connection::<u64>();
    /// g.add_stage(rs_impl::island::stages::Scan::new(i, o, 0u64, |a: &u64, x: u64| a + x));
    /// ```
    pub fn new(inlet: Inlet<A>, outlet: Outlet<S>, seed: S, f: F) -> Self {
        Scan {
            inlet,
            outlet,
            acc: seed,
            f,
        }
    }
}

impl<A, S, F> Stage for Scan<A, S, F>
where
    A: Send + 'static,
    S: Clone + Send + 'static,
    F: FnMut(&S, A) -> S + Send + 'static,
{
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn into_fusable(self) -> Result<Fusable, Self> {
        let (i, o) = (self.inlet, self.outlet);
        Ok(Fusable::new(self, i, o, |s: Self, next: Cont<S>| {
            fused::scan_cont(s.acc, s.f, next)
        }))
    }
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        self.acc = (self.f)(&self.acc, x);
        ctx.push(self.outlet, self.acc.clone());
    }
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

/// Folds every element into an accumulator and emits it once, when upstream completes.
pub struct Fold<A, S, F> {
    inlet: Inlet<A>,
    outlet: Outlet<S>,
    acc: Option<S>,
    f: F,
}
debug_stage!(Fold<A, S, F>);

impl<A, S, F: FnMut(S, A) -> S> Fold<A, S, F> {
    /// A stage emitting the fold of all elements with `f`, starting from `seed`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, i) = g.connection::<u64>();
    /// g.add_stage(rs_impl::island::stages::Fold::new(i, o, 0u64, |a, x: u64| a + x));
    /// ```
    pub fn new(inlet: Inlet<A>, outlet: Outlet<S>, seed: S, f: F) -> Self {
        Fold {
            inlet,
            outlet,
            acc: Some(seed),
            f,
        }
    }
}

impl<A, S, F> Stage for Fold<A, S, F>
where
    A: Send + 'static,
    S: Send + 'static,
    F: FnMut(S, A) -> S + Send,
{
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        if let Some(acc) = self.acc.take() {
            self.acc = Some((self.f)(acc, x));
        }
        ctx.pull(self.inlet);
    }
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if ctx.is_inlet_closed(self.inlet) {
            // Upstream finished before downstream asked: emit now.
            if let Some(acc) = self.acc.take() {
                ctx.push(self.outlet, acc);
            }
            ctx.complete_stage();
        } else {
            ctx.pull(self.inlet);
        }
    }
    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if ctx.is_available(self.outlet) {
            if let Some(acc) = self.acc.take() {
                ctx.push(self.outlet, acc);
            }
            ctx.complete_stage();
        }
        // Otherwise the out-port is still open, so the stage stays alive until downstream's
        // pull takes the result (`on_pull` above).
    }
}

/// A source emitting the items of an iterator, one per pull, then completing.
///
/// It reads one item ahead, so it completes together with the last element (push then
/// complete) instead of waiting for a pull that would only find the end (rules 1.2, 1.5).
pub struct IterSource<I: Iterator> {
    outlet: Outlet<I::Item>,
    iter: I,
    next: Option<I::Item>,
}

impl<I: Iterator> fmt::Debug for IterSource<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterSource").finish_non_exhaustive()
    }
}

impl<I: Iterator> IterSource<I> {
    /// A source of `iter`'s items.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](super::GraphBuilder).
    pub fn new<J: IntoIterator<IntoIter = I>>(outlet: Outlet<I::Item>, iter: J) -> Self {
        IterSource {
            outlet,
            iter: iter.into_iter(),
            next: None,
        }
    }
}

impl<I> Stage for IterSource<I>
where
    I: Iterator + Send,
    I::Item: Send + 'static,
{
    fn ports(&self, ports: &mut Ports) {
        ports.outlet(self.outlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        self.next = self.iter.next();
        if self.next.is_none() {
            ctx.complete(self.outlet);
        }
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if let Some(x) = self.next.take() {
            ctx.push(self.outlet, x);
            self.next = self.iter.next();
        }
        if self.next.is_none() {
            ctx.complete(self.outlet); // push then complete
        }
    }
}

/// The stream a [`StreamSource`] reads: elements or the error that ends it.
pub type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Error>> + Send>>;

/// A source emitting the items of a `futures::Stream` (`Ok` elements; the first `Err` fails
/// the stream), polled on the island with a waker that posts to the stage: a stream that is
/// not ready leaves the island free until it wakes.
///
/// It polls **one ahead** (like [`IterSource`]), so that a finished or failed stream ends
/// without waiting for a pull that would only find the end (rules 1.2, 1.4, 1.5): right
/// away, and again after each push. The bound: at most one element held, the one that look
/// found, until the next pull. A panic in the stream fails it with
/// [`CompatError::StreamPanicked`](crate::compat::CompatError::StreamPanicked). The stream is
/// dropped at its end, when downstream cancels (even while it is pending), and when the
/// island stops.
pub struct StreamSource<T> {
    outlet: Outlet<T>,
    stream: Option<BoxStream<T>>,
    /// The element found ahead of a pull.
    held: Option<T>,
    /// Posts to this stage (made in `pre_start`, where the notifier is known).
    waker: Option<Waker>,
}
debug_stage!(StreamSource<T>);

impl<T: Send + 'static> StreamSource<T> {
    /// A source of `stream`'s items.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::StreamExt;
    /// use rs_impl::island::{stages::{CollectSink, StreamSource}, GraphBuilder, Island};
    ///
    /// let mut g = GraphBuilder::new();
    /// let (o, i) = g.connection::<u32>();
    /// g.add_stage(StreamSource::new(o, Box::pin(futures::stream::iter(1..=3).map(Ok))));
    /// let (sink, collected) = CollectSink::new(i);
    /// g.add_stage(sink);
    /// futures::executor::block_on(Island::new(g.build().unwrap()));
    /// assert_eq!(collected.take().unwrap().unwrap(), vec![1, 2, 3]);
    /// ```
    pub fn new(outlet: Outlet<T>, stream: BoxStream<T>) -> Self {
        StreamSource {
            outlet,
            stream: Some(stream),
            held: None,
            waker: None,
        }
    }

    /// Pushes what is held if downstream pulled, then polls (with a pull to serve, or one
    /// ahead), until it holds one element nobody pulled, the stream is pending, or it ended.
    fn advance(&mut self, ctx: &mut Ctx<'_>) {
        loop {
            if let Some(x) = self.held.take() {
                if !ctx.is_available(self.outlet) {
                    self.held = Some(x);
                    return;
                }
                ctx.push(self.outlet, x);
            }
            let (Some(stream), Some(waker)) = (self.stream.as_mut(), self.waker.as_ref()) else {
                return;
            };
            let mut cx = Context::from_waker(waker);
            match catch_unwind(AssertUnwindSafe(|| stream.as_mut().poll_next(&mut cx))) {
                Ok(Poll::Ready(Some(Ok(x)))) => self.held = Some(x),
                Ok(Poll::Pending) => return,
                Ok(Poll::Ready(None)) => {
                    self.drop_stream();
                    ctx.complete(self.outlet);
                    return;
                }
                Ok(Poll::Ready(Some(Err(e)))) => {
                    self.drop_stream();
                    ctx.fail(self.outlet, e);
                    return;
                }
                Err(payload) => {
                    self.drop_stream();
                    let e = crate::compat::CompatError::StreamPanicked {
                        message: crate::panics::panic_message(&*payload),
                    };
                    ctx.fail(self.outlet, e.into());
                    return;
                }
            }
        }
    }

    fn drop_stream(&mut self) {
        crate::panics::drop_guarded(self.stream.take());
        crate::panics::drop_guarded(self.held.take());
    }
}

/// The waker of a [`StreamSource`]'s stream: posts to the stage.
struct PostToStage(super::Notifier);

impl std::task::Wake for PostToStage {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.notify();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.notify();
    }
}

impl<T: Send + 'static> Stage for StreamSource<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.outlet(self.outlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        // The waker holds a std `Arc` (what `Waker::from` takes); the notifier inside is the
        // island's.
        #[allow(clippy::disallowed_types)]
        let wake = std::sync::Arc::new(PostToStage(ctx.notifier()));
        self.waker = Some(Waker::from(wake));
        self.advance(ctx);
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.advance(ctx);
    }
    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        self.advance(ctx);
    }
    fn on_downstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.drop_stream(); // cancelled: promptly, even while the stream is pending (3.13)
        ctx.complete_stage();
    }
    fn post_stop(&mut self) {
        self.drop_stream();
    }
}

/// The elements so far, and how the stream ended (`None` while it runs).
type Seen<T> = (Vec<T>, Option<Result<(), Error>>);

/// What a [`CollectSink`] saw: the elements, and how the stream ended.
pub struct Collected<T> {
    inner: Arc<Mutex<Seen<T>>>,
}

impl<T> fmt::Debug for Collected<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Collected").finish_non_exhaustive()
    }
}

impl<T> Clone for Collected<T> {
    fn clone(&self) -> Self {
        Collected {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Collected<T> {
    /// The elements and the outcome once the stream ended (`None` before): `Ok` with every
    /// element after completion, the error after a failure, or
    /// [`Cancelled`](crate::subscriber::Cancelled) if the sink was stopped without either.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](super::GraphBuilder).
    pub fn take(&self) -> Option<Result<Vec<T>, Error>> {
        let mut g = self.inner.lock();
        let outcome = g.1.take()?;
        let items = std::mem::take(&mut g.0);
        Some(outcome.map(|()| items))
    }

    /// How many elements arrived so far.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (_o, i) = g.connection::<u8>();
    /// let (_sink, seen) = rs_impl::island::stages::CollectSink::new(i);
    /// assert_eq!(seen.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.lock().0.len()
    }

    /// Whether no element arrived so far.
    ///
    /// # Examples
    ///
    /// See [`Collected::len`].
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A sink that pulls one element at a time and collects them (for tests and examples).
pub struct CollectSink<T> {
    inlet: Inlet<T>,
    seen: Collected<T>,
}

impl<T> fmt::Debug for CollectSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CollectSink").finish_non_exhaustive()
    }
}

impl<T> CollectSink<T> {
    /// The sink and the handle on what it collects.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](super::GraphBuilder).
    pub fn new(inlet: Inlet<T>) -> (Self, Collected<T>) {
        let seen = Collected {
            inner: Arc::new(Mutex::new((Vec::new(), None))),
        };
        (
            CollectSink {
                inlet,
                seen: seen.clone(),
            },
            seen,
        )
    }
}

impl<T: Send + 'static> Stage for CollectSink<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        self.seen.inner.lock().0.push(x);
        ctx.pull(self.inlet);
    }
    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.seen.inner.lock().1.get_or_insert(Ok(()));
        ctx.complete_stage();
    }
    fn on_upstream_failure(&mut self, _: PortId, error: Error, ctx: &mut Ctx<'_>) {
        self.seen.inner.lock().1.get_or_insert(Err(error));
        ctx.complete_stage();
    }
    fn post_stop(&mut self) {
        self.seen
            .inner
            .lock()
            .1
            .get_or_insert(Err(Error::new(crate::subscriber::Cancelled)));
    }
}
