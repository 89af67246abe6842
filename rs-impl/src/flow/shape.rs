//! The blueprint types of a [`Flow`](super::Flow): one type per step, nested like iterator
//! adapters (`Apply<Apply<FromIter<I>, Map<F>>, Filter<P>>`), so the whole chain is one
//! static type and its operators fuse at compile time.
//!
//! A blueprint is materialised **from its end**: [`Shape::place`] receives the exit its
//! elements go to and passes it up the chain — an operator wraps it in an
//! [`OpExit`](super::exit::OpExit); a stage of its own or an async boundary places the part
//! before it with an out-port or a boundary's output side, then starts a new segment that
//! feeds the exit; a source makes the segment's entry. A [`Boxed`] blueprint is the one place
//! where the exit becomes a trait object.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc as StdArc;

use super::blueprint::{spawn_into, Blueprint};
use super::edge::RingExit;
use super::entry::{IterEntry, PortEntry, RingEntry};
use super::exit::{Exit, OpExit, PortExit};
use super::operator::Operator;
use super::ring_in::{RingIn, SharedPublisher};
use super::ring_out::RingOut;
use super::segment::Segment;
use super::stream::{BoxStream, StreamSource};
use crate::boundary::BoundaryConfig;
use crate::boundary::{Producer, Shared};
use crate::island::{
    BuildError, GraphBuilder, Inlet, Interpreter, Outlet, Runtime, SpawnOn, Stage,
};
use crate::loom::sync::Arc;

/// What a materialisation builds: the graph of the island being built, and the islands built
/// before it (in flow order).
#[derive(Default)]
#[allow(unreachable_pub)] // sealed: reachable only through `Shape`'s hidden method
pub struct Build {
    pub(crate) graph: GraphBuilder,
    pub(crate) islands: Vec<(Interpreter, Option<SpawnOn>)>,
    /// Where the island being built (and every later one) is spawned, after an
    /// `observe_on`; `None`: the publisher's runtime.
    pub(crate) spawn_on: Option<SpawnOn>,
    /// The input of the lane being placed (keyed lanes, `crate::lanes`): its ring's consumer
    /// end, taken by the lane flow's source when it is placed.
    pub(crate) lane_input: Option<Box<dyn std::any::Any + Send>>,
}

impl fmt::Debug for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Build")
            .field("graph", &self.graph)
            .field("islands", &self.islands.len())
            .finish_non_exhaustive()
    }
}

impl Build {
    /// Adds the segment `entry → exit` to the island being built.
    pub(crate) fn segment<E, X>(&mut self, entry: E, exit: X)
    where
        E: super::entry::Entry + 'static,
        X: Exit<E::Item> + 'static,
    {
        self.graph.add_stage(Segment::new(entry, exit));
    }

    /// Ends the island being built (an async boundary); the next stages go to a new one.
    pub(crate) fn end_island(&mut self) -> Result<(), BuildError> {
        let graph = std::mem::take(&mut self.graph);
        self.islands.push((graph.build()?, self.spawn_on.clone()));
        Ok(())
    }

    /// Ends the last island; every island of the materialisation, in flow order, with where
    /// it asks to be spawned.
    pub(crate) fn finish(mut self) -> Result<Vec<(Interpreter, Option<SpawnOn>)>, BuildError> {
        self.end_island()?;
        Ok(self.islands)
    }
}

/// The type of a [`Flow`](super::Flow)'s blueprint (the blueprint types nest like iterator adapters, and a flow is materialised from its end):
/// implemented by this crate's blueprint types only.
///
/// Name it in your signatures as `Flow<impl Shape<Out = T>>`, or erase it with
/// [`Flow::boxed`](super::Flow::boxed) into a [`BoxFlow<T>`](super::BoxFlow).
pub trait Shape: Clone + Send + Sync + 'static {
    /// The elements the flow produces.
    type Out: Send + 'static;

    /// Materialises this part of the blueprint, ending in `exit`.
    #[doc(hidden)]
    fn place<X: Exit<Self::Out> + 'static>(&self, b: &mut Build, exit: X)
        -> Result<(), BuildError>;

    /// The islands one materialisation runs on: one more than its async boundaries.
    #[doc(hidden)]
    fn islands(&self) -> usize;
}

/// The elements of an iterator, produced inside the island.
#[derive(Clone)]
pub struct FromIter<I> {
    iterable: I,
}

impl<I> FromIter<I> {
    pub(crate) fn new(iterable: I) -> Self {
        FromIter { iterable }
    }
}

impl<I> fmt::Debug for FromIter<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromIter")
    }
}

impl<I> Shape for FromIter<I>
where
    I: IntoIterator + Clone + Send + Sync + 'static,
    I::IntoIter: Send + 'static,
    I::Item: Send + 'static,
{
    type Out = I::Item;

    fn place<X: Exit<I::Item> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        b.segment(IterEntry::new(self.iterable.clone().into_iter()), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        1
    }
}

/// Where a [`FromPublisher`] reads: any publisher, or a flow of ours (whose last island then
/// writes batches straight into this island's input buffer).
enum Upstream<T> {
    Publisher(SharedPublisher<T>),
    Flow(StdArc<dyn Blueprint<T>>, Runtime),
}

impl<T> Clone for Upstream<T> {
    fn clone(&self) -> Self {
        match self {
            Upstream::Publisher(p) => Upstream::Publisher(p.clone()),
            Upstream::Flow(p, r) => Upstream::Flow(p.clone(), r.clone()),
        }
    }
}

/// The elements of a publisher, through an input buffer.
pub struct FromPublisher<T> {
    upstream: Upstream<T>,
    buffer: usize,
}

impl<T> Clone for FromPublisher<T> {
    fn clone(&self) -> Self {
        FromPublisher {
            upstream: self.upstream.clone(),
            buffer: self.buffer,
        }
    }
}

impl<T> fmt::Debug for FromPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromPublisher")
            .field("buffer", &self.buffer)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> FromPublisher<T> {
    pub(crate) fn publisher(publisher: SharedPublisher<T>, buffer: usize) -> Self {
        FromPublisher {
            upstream: Upstream::Publisher(publisher),
            buffer,
        }
    }

    pub(crate) fn flow(plan: StdArc<dyn Blueprint<T>>, runtime: Runtime, buffer: usize) -> Self {
        FromPublisher {
            upstream: Upstream::Flow(plan, runtime),
            buffer,
        }
    }
}

impl<T: Send + 'static> Shape for FromPublisher<T> {
    type Out = T;

    fn place<X: Exit<T> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let shared = Shared::new(self.buffer);
        match &self.upstream {
            Upstream::Publisher(p) => {
                b.segment(RingEntry::new(RingIn::new(shared, Some(p.clone()))), exit);
            }
            Upstream::Flow(plan, runtime) => {
                {
                    let mut control = shared.control();
                    shared.claim(Producer::Internal, &mut control);
                }
                let (plan, runtime) = (plan.clone(), runtime.clone());
                let producer = shared.clone();
                let entry = RingEntry::new(RingIn::new(shared, None))
                    .with_upstream(Box::new(move || spawn_into(&*plan, &runtime, producer)));
                b.segment(entry, exit);
            }
        }
        Ok(())
    }

    fn islands(&self) -> usize {
        1
    }
}

/// The elements a [`BoundarySubscriber`](crate::boundary::BoundarySubscriber) receives.
pub struct FromBoundary<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for FromBoundary<T> {
    fn clone(&self) -> Self {
        FromBoundary {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for FromBoundary<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromBoundary")
    }
}

impl<T> FromBoundary<T> {
    pub(crate) fn new(shared: Arc<Shared<T>>) -> Self {
        FromBoundary { shared }
    }
}

impl<T: Send + 'static> Shape for FromBoundary<T> {
    type Out = T;

    fn place<X: Exit<T> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        if !self.shared.claim_consumer() {
            return Err(BuildError::AlreadyMaterialised);
        }
        b.segment(RingEntry::new(RingIn::new(self.shared.clone(), None)), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        1
    }
}

/// The elements of a fresh `futures::Stream` per materialisation, polled on the island.
pub struct FromStream<T> {
    make: StdArc<dyn Fn() -> BoxStream<T> + Send + Sync>,
}

impl<T> Clone for FromStream<T> {
    fn clone(&self) -> Self {
        FromStream {
            make: self.make.clone(),
        }
    }
}

impl<T> fmt::Debug for FromStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromStream")
    }
}

impl<T> FromStream<T> {
    pub(crate) fn new(make: StdArc<dyn Fn() -> BoxStream<T> + Send + Sync>) -> Self {
        FromStream { make }
    }
}

impl<T: Send + 'static> Shape for FromStream<T> {
    type Out = T;

    fn place<X: Exit<T> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let (o, i) = b.graph.connection::<T>();
        b.graph.add_stage(StreamSource::new(o, (self.make)()));
        b.segment(PortEntry(i), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        1
    }
}

/// A linear operator after the part before it ([`Flow::apply`](super::Flow::apply), and
/// every built-in operator).
#[derive(Clone)]
pub struct Apply<S, O> {
    inner: S,
    op: O,
}

impl<S, O> Apply<S, O> {
    pub(crate) fn new(inner: S, op: O) -> Self {
        Apply { inner, op }
    }
}

impl<S: fmt::Debug, O> fmt::Debug for Apply<S, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Apply")
            .field("inner", &self.inner)
            .field("op", &std::any::type_name::<O>())
            .finish()
    }
}

impl<S, O> Shape for Apply<S, O>
where
    S: Shape,
    O: Operator<S::Out> + Sync,
{
    type Out = O::Out;

    #[inline]
    fn place<X: Exit<O::Out> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        self.inner.place(b, OpExit::new(self.op.clone(), exit))
    }

    fn islands(&self) -> usize {
        self.inner.islands()
    }
}

/// A stage of its own ([`Flow::via`](super::Flow::via)): the part before it ends in its
/// in-port, a new segment starts at its out-port.
pub struct Via<S, F, U> {
    inner: S,
    factory: StdArc<F>,
    _u: PhantomData<fn() -> U>,
}

impl<S: Clone, F, U> Clone for Via<S, F, U> {
    fn clone(&self) -> Self {
        Via {
            inner: self.inner.clone(),
            factory: self.factory.clone(),
            _u: PhantomData,
        }
    }
}

impl<S: fmt::Debug, F, U> fmt::Debug for Via<S, F, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Via").field("inner", &self.inner).finish()
    }
}

impl<S, F, U> Via<S, F, U> {
    pub(crate) fn new(inner: S, factory: F) -> Self {
        Via {
            inner,
            factory: StdArc::new(factory),
            _u: PhantomData,
        }
    }
}

impl<S, F, U, St> Shape for Via<S, F, U>
where
    S: Shape,
    U: Send + 'static,
    St: Stage + 'static,
    F: Fn(Inlet<S::Out>, Outlet<U>) -> St + Send + Sync + 'static,
{
    type Out = U;

    fn place<X: Exit<U> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let (o, i) = b.graph.connection::<S::Out>();
        self.inner.place(b, PortExit::new(o))?;
        let (o2, i2) = b.graph.connection::<U>();
        b.graph.add_stage((self.factory)(i, o2));
        b.segment(PortEntry(i2), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        self.inner.islands()
    }
}

/// An async boundary ([`Flow::async_boundary`](super::Flow::async_boundary)): the part
/// before it ends its island in a boundary's output side; the next island starts at the
/// boundary's input side.
#[derive(Clone, Debug)]
pub struct Boundary<S> {
    inner: S,
    config: BoundaryConfig,
}

impl<S> Boundary<S> {
    pub(crate) fn new(inner: S, config: BoundaryConfig) -> Self {
        Boundary { inner, config }
    }
}

impl<S: Shape> Shape for Boundary<S> {
    type Out = S::Out;

    fn place<X: Exit<S::Out> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        let shared = Shared::<S::Out>::new(self.config.ring_size());
        {
            let mut control = shared.control();
            shared.claim(Producer::Internal, &mut control);
        }
        shared.claim_consumer();
        let out = RingExit(RingOut::new(shared.clone(), self.config.cap()));
        self.inner.place(b, out)?;
        b.end_island()?;
        b.segment(RingEntry::new(RingIn::new(shared, None)), exit);
        Ok(())
    }

    fn islands(&self) -> usize {
        self.inner.islands() + 1
    }
}

/// A blueprint placed through a trait object (see [`Boxed`]).
trait DynShape<T>: Send + Sync {
    fn place_dyn(&self, b: &mut Build, exit: Box<dyn Exit<T>>) -> Result<(), BuildError>;
    fn islands_dyn(&self) -> usize;
}

impl<S: Shape> DynShape<S::Out> for S {
    fn place_dyn(&self, b: &mut Build, exit: Box<dyn Exit<S::Out>>) -> Result<(), BuildError> {
        self.place(b, exit)
    }
    fn islands_dyn(&self) -> usize {
        self.islands()
    }
}

/// A blueprint whose type is erased ([`Flow::boxed`](super::Flow::boxed)): what comes after
/// it reaches the part before it through one trait object, at one dynamic call per element
/// at that point (the operators on each side stay fused).
pub struct Boxed<T> {
    inner: StdArc<dyn DynShape<T>>,
}

impl<T> Clone for Boxed<T> {
    fn clone(&self) -> Self {
        Boxed {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Boxed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Boxed")
    }
}

impl<T: Send + 'static> Boxed<T> {
    pub(crate) fn new<S: Shape<Out = T>>(shape: S) -> Self {
        Boxed {
            inner: StdArc::new(shape),
        }
    }
}

impl<T: Send + 'static> Shape for Boxed<T> {
    type Out = T;

    fn place<X: Exit<T> + 'static>(&self, b: &mut Build, exit: X) -> Result<(), BuildError> {
        self.inner.place_dyn(b, Box::new(exit))
    }

    fn islands(&self) -> usize {
        self.inner.islands_dyn()
    }
}
