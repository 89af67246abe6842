//! The flow's parts as interpreter stages of their own, for graphs wired by hand with a
//! [`GraphBuilder`](crate::island::GraphBuilder): an operator between two ports
//! ([`OperatorStage`]), an iterator source ([`IterSource`]), a publisher's elements
//! ([`PublisherSource`]) and a subscriber served from the island ([`SubscriberSink`]).
//!
//! Each is a segment (the stage a [`Flow`](super::Flow) materialises into) with port ends, so
//! it behaves exactly as the same part of a flow does; only the hops between stages cost
//! interpreter events (a pull up, a push down).

use std::fmt;

use rs_api::{BoxSubscriber, Error};

use super::edge::SubscriberExit;
use super::entry::{IterEntry, PortEntry, RingEntry};
use super::exit::{OpExit, PortExit};
use super::operator::Operator;
use super::ring_in::RingIn;
use super::ring_in::SharedPublisher;
use super::segment::Segment;
use crate::boundary::Shared;
use crate::island::{Ctx, Inlet, Outlet, PortId, Ports, RunEnd, Stage};

/// Implements [`Stage`] for a newtype over a [`Segment`] by delegation.
macro_rules! segment_stage {
    ($name:ident < $($g:ident),* > where $($bounds:tt)*) => {
        impl<$($g),*> Stage for $name<$($g),*> where $($bounds)* {
            fn ports(&self, ports: &mut Ports) {
                self.0.ports(ports)
            }
            fn name(&self) -> &'static str {
                self.0.name()
            }
            fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
                self.0.pre_start(ctx)
            }
            #[inline]
            fn on_push(&mut self, p: PortId, ctx: &mut Ctx<'_>) {
                self.0.on_push(p, ctx)
            }
            #[inline]
            fn on_pull(&mut self, p: PortId, ctx: &mut Ctx<'_>) {
                self.0.on_pull(p, ctx)
            }
            fn on_upstream_finish(&mut self, p: PortId, ctx: &mut Ctx<'_>) {
                self.0.on_upstream_finish(p, ctx)
            }
            fn on_upstream_failure(&mut self, p: PortId, error: Error, ctx: &mut Ctx<'_>) {
                self.0.on_upstream_failure(p, error, ctx)
            }
            fn on_downstream_finish(&mut self, p: PortId, ctx: &mut Ctx<'_>) {
                self.0.on_downstream_finish(p, ctx)
            }
            fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
                self.0.on_async_input(ctx)
            }
            fn on_park(&mut self, end: RunEnd, ctx: &mut Ctx<'_>) {
                self.0.on_park(end, ctx)
            }
            fn post_stop(&mut self) {
                self.0.post_stop()
            }
        }

        impl<$($g),*> fmt::Debug for $name<$($g),*> where $($bounds)* {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.0).finish()
            }
        }
    };
}

/// A linear [`Operator`] as an interpreter stage of its own, between an in-port and an
/// out-port (the same operator a [`Flow`](super::Flow) fuses).
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Map, IterSource, OperatorStage};
/// use rs_impl::island::{stages::CollectSink, GraphBuilder};
///
/// let mut g = GraphBuilder::new();
/// let (src_out, map_in) = g.connection::<u32>();
/// let (map_out, sink_in) = g.connection::<u32>();
/// let (sink, seen) = CollectSink::new(sink_in);
/// g.add_stage(IterSource::new(src_out, 1..=3u32));
/// g.add_stage(OperatorStage::new(map_in, map_out, Map::new(|x: u32| x * 10)));
/// g.add_stage(sink);
/// let mut interpreter = g.build().unwrap();
/// interpreter.init();
/// interpreter.execute(u64::MAX);
/// assert!(interpreter.is_completed());
/// assert_eq!(seen.take().unwrap().unwrap(), vec![10, 20, 30]);
/// ```
pub struct OperatorStage<I, O: Operator<I>>(Segment<PortEntry<I>, OpExit<O, PortExit<O::Out>>>);

impl<I: Send + 'static, O: Operator<I>> OperatorStage<I, O> {
    /// `op` between `inlet` and `outlet`.
    ///
    /// # Examples
    ///
    /// See [`OperatorStage`].
    pub fn new(inlet: Inlet<I>, outlet: Outlet<O::Out>, op: O) -> Self {
        let name = op.name();
        OperatorStage(
            Segment::new(PortEntry(inlet), OpExit::new(op, PortExit::new(outlet))).named(name),
        )
    }
}

segment_stage!(OperatorStage<I, O> where I: Send + 'static, O: Operator<I>);

/// A source emitting the items of an iterator, one per pull, then completing (together with
/// the last element: it reads one ahead, rules 1.2, 1.5).
///
/// # Examples
///
/// See [`OperatorStage`].
pub struct IterSource<I: Iterator>(Segment<IterEntry<I>, PortExit<I::Item>>);

impl<I> IterSource<I>
where
    I: Iterator + Send,
    I::Item: Send + 'static,
{
    /// A source of `iter`'s items.
    ///
    /// # Examples
    ///
    /// See [`OperatorStage`].
    pub fn new<J: IntoIterator<IntoIter = I>>(outlet: Outlet<I::Item>, iter: J) -> Self {
        IterSource(
            Segment::new(IterEntry::new(iter.into_iter()), PortExit::new(outlet))
                .named("IterSource"),
        )
    }
}

segment_stage!(IterSource<I> where I: Iterator + Send, I::Item: Send + 'static);

/// A source stage that subscribes to a [`Publisher`](rs_api::Publisher) when its island
/// starts and emits its elements, through an input buffer of `size` (see
/// [`crate::boundary`] for the buffering and demand rules: what
/// [`Flow::from_publisher`](super::Flow::from_publisher) does).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// let mut g = rs_impl::island::GraphBuilder::new();
/// let (o, _i) = g.connection::<u64>();
/// let s = rs_impl::flow::PublisherSource::new(o, Arc::new(rs_impl::source::range(0..3u64)), 16);
/// g.add_stage(s);
/// ```
pub struct PublisherSource<T>(Segment<RingEntry<T>, PortExit<T>>);

impl<T: Send + 'static> PublisherSource<T> {
    /// A source of `publisher`'s elements with an input buffer of `size` (rounded up to a
    /// power of two).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    ///
    /// # Examples
    ///
    /// See [`PublisherSource`].
    pub fn new(outlet: Outlet<T>, publisher: SharedPublisher<T>, size: usize) -> Self {
        assert!(
            size > 0,
            "PublisherSource::new: the input buffer must hold at least one element"
        );
        let shared = Shared::new(size);
        PublisherSource(
            Segment::new(
                RingEntry::new(RingIn::new(shared, Some(publisher))),
                PortExit::new(outlet),
            )
            .named("PublisherSource"),
        )
    }
}

segment_stage!(PublisherSource<T> where T: Send + 'static);

/// A sink stage that serves one [`Subscriber`](rs_api::Subscriber) from the island (see
/// [`Flow`](super::Flow) for what the subscriber sees).
///
/// # Examples
///
/// ```
/// let mut g = rs_impl::island::GraphBuilder::new();
/// let (_o, i) = g.connection::<u64>();
/// let (s, _h) = rs_impl::subscriber::collect::<u64>(rs_impl::subscriber::RequestStrategy::Unbounded);
/// g.add_stage(rs_impl::flow::SubscriberSink::new(i, Box::new(s)));
/// ```
pub struct SubscriberSink<T>(Segment<PortEntry<T>, SubscriberExit<T>>);

impl<T: Send + 'static> SubscriberSink<T> {
    /// A sink delivering to `subscriber`, which gets `on_subscribe` when the island starts.
    ///
    /// # Examples
    ///
    /// See [`SubscriberSink`].
    pub fn new(inlet: Inlet<T>, subscriber: BoxSubscriber<T>) -> Self {
        SubscriberSink(
            Segment::new(PortEntry(inlet), SubscriberExit::new(subscriber)).named("SubscriberSink"),
        )
    }
}

segment_stage!(SubscriberSink<T> where T: Send + 'static);
