//! A fused segment whose ends are not both ports of the island: its elements come from a
//! boundary's ring ([`RingIn`]) instead of an in-port, or leave through an [`Exit`] — a
//! boundary's output side, or the subscriber of the island — instead of an out-port.
//!
//! Such a segment moves a whole batch per handler call: it takes an element from its entry,
//! runs the fused operators (direct calls), and hands the result to its exit, while the exit
//! has room and the entry has elements, with no interpreter event per element. A segment
//! between two boundaries is a loop from one ring into the other. The loop is bounded (one
//! ring's worth per call, then the segment posts to itself), so an island still yields to its
//! executor after its budget.
//!
//! **Before parking** with room downstream and an empty ring whose producing island is running
//! on another thread, the segment lingers a few microseconds for the next flush (see
//! [`crate::boundary`]).
//!
//! **Termination across the segment.** The entry's completion is acted on once the ring is
//! drained (deferred); an upstream failure as soon as nothing more can be delivered now: at
//! once when the exit knows its demand exactly (a boundary, a subscriber), or, with an
//! out-port exit, when the island is about to park (after every element downstream pulled in
//! that run) — buffered input beyond that is dropped (eager). The exit's cancel cancels the
//! entry (and drops what is buffered). A boundary exit flushes when the island's run ends, at
//! its cap, and before completion or failure (see [`crate::boundary`]).

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rs_api::Error;

use super::fused::{Cont, Sent};
use super::interpreter::{BuildError, GraphBuilder};
use super::mailbox::Notifier;
use super::stage::{Ctx, Inlet, Outlet, PortId, Ports, RunEnd, Stage};
use crate::boundary::input::RingIn;
use crate::boundary::output::RingOut;
use crate::handoff::Polled;
use crate::island::edge::SubscriberOut;
use crate::island::IslandError;
use crate::panics as report;

/// How an exit closed.
#[derive(Debug)]
pub(crate) enum Closing {
    /// Downstream cancelled: no signal.
    Cancelled,
    /// Downstream broke a rule (`request(0)`): it gets this error.
    Failed(Error),
}

/// Where a segment's elements go when not to an out-port. The element type is erased here;
/// the segment's last operator reaches the typed [`Out`] through [`Ctx::exit_mut`].
pub(crate) trait Exit: Send {
    /// The typed [`Out`], for the operator chain.
    fn as_any(&mut self) -> &mut dyn Any;
    /// Registers with the island (and delivers `on_subscribe`, for a subscriber).
    fn start(&mut self, ctx: &mut Ctx<'_>);
    /// Whether it is a boundary's output side (a source iterator is fused into a segment
    /// ending in one: its elements go straight into the ring).
    fn is_boundary(&self) -> bool;
    /// Elements it takes now; 0: none (then [`closed`](Exit::closed) says whether for good).
    fn room(&mut self) -> usize;
    /// Whether it closed (downstream cancelled, or a bad request).
    fn closed(&mut self) -> Option<Closing>;
    /// The island's run ends (a boundary flushes).
    fn on_park(&mut self, end: RunEnd);
    /// The segment completed: after everything it took.
    fn complete(&mut self);
    /// The segment failed.
    fn fail(&mut self, error: Error);
    /// The segment stops after the exit closed, or without a terminal signal (the island was
    /// dropped): let go of everything.
    fn stop(&mut self);
}

/// The typed exit of a segment whose last element type is `B`.
#[derive(Debug)]
pub(crate) enum Out<B> {
    /// A boundary's output side.
    Ring(RingOut<B>),
    /// The island's subscriber.
    Subscriber(SubscriberOut<B>),
}

impl<B: Send + 'static> Out<B> {
    /// Hands `x` on (the exit had room).
    #[inline]
    pub(crate) fn push(&mut self, x: B) -> Sent {
        match self {
            Out::Ring(r) => r.push(x),
            Out::Subscriber(s) => s.push(x),
        }
    }
}

impl<B: Send + 'static> Exit for Out<B> {
    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        match self {
            Out::Ring(r) => r.start(ctx),
            Out::Subscriber(s) => s.start(ctx),
        }
    }
    fn is_boundary(&self) -> bool {
        matches!(self, Out::Ring(_))
    }
    #[inline]
    fn room(&mut self) -> usize {
        match self {
            Out::Ring(r) => r.room(),
            Out::Subscriber(s) => s.room(),
        }
    }
    fn closed(&mut self) -> Option<Closing> {
        match self {
            Out::Ring(r) => r.closed(),
            Out::Subscriber(s) => s.closed(),
        }
    }
    fn on_park(&mut self, end: RunEnd) {
        if let Out::Ring(r) = self {
            r.on_park(end);
        }
    }
    fn complete(&mut self) {
        match self {
            Out::Ring(r) => r.complete(),
            Out::Subscriber(s) => s.finish(Some(None)),
        }
    }
    fn fail(&mut self, error: Error) {
        match self {
            Out::Ring(r) => r.fail(error),
            Out::Subscriber(s) => s.finish(Some(Some(error))),
        }
    }
    fn stop(&mut self) {
        match self {
            Out::Ring(r) => r.stop(),
            Out::Subscriber(s) => s.finish(None),
        }
    }
}

/// The last continuation of a segment ending in an [`Exit`]: hands the element to the typed
/// [`Out`] the segment lends through the context.
pub(crate) fn out_terminal<B: Send + 'static>() -> Cont<B> {
    Box::new(|ctx: &mut Ctx<'_>, x: B| match ctx.exit_mut::<Out<B>>() {
        Some(out) => out.push(x),
        None => std::panic::panic_any(IslandError::PortMisuse {
            op: "push",
            port: u32::MAX,
            reason: "a fused segment's exit carries another element type",
        }),
    })
}

/// The last continuation of a segment ending in out-port `outlet`.
pub(crate) fn port_terminal<B: Send + 'static>(outlet: Outlet<B>) -> Cont<B> {
    Box::new(move |ctx: &mut Ctx<'_>, x: B| {
        ctx.push(outlet, x);
        Sent::Pushed
    })
}

/// Where a segment's elements come from, type-erased for the builder.
pub(crate) enum SegIn {
    /// The in-port of this connection.
    Port(u32),
    /// A [`RingIn`] of the segment's first element type.
    Ring(Box<dyn Any + Send>),
    /// A source iterator not yet placed: a stage of its own, or fused into a segment that
    /// ends in a boundary.
    Iter(Box<dyn IterHead>),
}

impl fmt::Debug for SegIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SegIn::Port(c) => write!(f, "Port({c})"),
            SegIn::Ring(_) => f.write_str("Ring"),
            SegIn::Iter(_) => f.write_str("Iter"),
        }
    }
}

/// A source iterator waiting to be placed (see [`SegIn::Iter`]).
pub(crate) trait IterHead: Send {
    /// As a source stage of its own ([`IterSource`](super::stages::IterSource)): the
    /// connection its elements leave on.
    fn into_stage(self: Box<Self>, g: &mut GraphBuilder) -> u32;
    /// As a segment's entry: a `Box<dyn Iterator<Item = T> + Send>`, boxed as `Any`.
    fn into_iter(self: Box<Self>) -> Box<dyn Any + Send>;
}

/// The [`IterHead`] of an iterator `I`.
pub(crate) struct IterOf<I>(pub(crate) I);

impl<I> IterHead for IterOf<I>
where
    I: Iterator + Send + 'static,
    I::Item: Send + 'static,
{
    fn into_stage(self: Box<Self>, g: &mut GraphBuilder) -> u32 {
        let (o, i) = g.connection::<I::Item>();
        g.add_stage(super::stages::IterSource::new(o, self.0));
        i.id().index()
    }
    fn into_iter(self: Box<Self>) -> Box<dyn Any + Send> {
        let it: Box<dyn Iterator<Item = I::Item> + Send> = Box::new(self.0);
        Box::new(it)
    }
}

impl SegIn {
    /// The typed entry of a segment ending in `output`: a source iterator is fused only into
    /// a segment ending in a boundary, and is a stage of its own otherwise.
    pub(crate) fn typed<A: Send + 'static>(
        self,
        g: &mut GraphBuilder,
        output: &SegOut,
    ) -> Result<Entry<A>, BuildError> {
        let wrong = || BuildError::WrongType {
            connection: u32::MAX,
            expected: "the source's element type",
            asked: std::any::type_name::<A>(),
        };
        match self {
            SegIn::Port(c) => Ok(Entry::Port(g.inlet::<A>(PortId(c))?)),
            SegIn::Ring(b) => match b.downcast::<RingIn<A>>() {
                Ok(r) => Ok(Entry::Ring(*r)),
                Err(_) => Err(wrong()),
            },
            SegIn::Iter(head) => {
                if matches!(output, SegOut::Out(e) if e.is_boundary()) {
                    match head
                        .into_iter()
                        .downcast::<Box<dyn Iterator<Item = A> + Send>>()
                    {
                        Ok(iter) => Ok(Entry::Iter {
                            iter: *iter,
                            next: None,
                            started: false,
                        }),
                        Err(_) => Err(wrong()),
                    }
                } else {
                    let c = head.into_stage(g);
                    Ok(Entry::Port(g.inlet::<A>(PortId(c))?))
                }
            }
        }
    }
}

/// Where a segment's elements go: an out-port (made by the caller) or an [`Exit`].
pub(crate) enum SegOut {
    /// The out-port of this connection.
    Port(u32),
    /// An exit.
    Out(Box<dyn Exit>),
}

impl fmt::Debug for SegOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SegOut::Port(c) => write!(f, "Port({c})"),
            SegOut::Out(_) => f.write_str("Out"),
        }
    }
}

/// A segment's typed entry.
pub(crate) enum Entry<A> {
    /// An in-port: one element per pull.
    Port(Inlet<A>),
    /// A boundary's input side.
    Ring(RingIn<A>),
    /// A source iterator, read one ahead so that the last element completes the segment.
    Iter {
        iter: Box<dyn Iterator<Item = A> + Send>,
        next: Option<A>,
        started: bool,
    },
}

/// Adds a segment with no operators: `input` straight to `output` (for a boundary right after
/// a source or a stage, a subscriber right after a boundary, …). Returns the connection made
/// for a [`SegOut::Port`]'s caller: `output` itself then.
pub(crate) fn add_bare<T: Send + 'static>(
    g: &mut GraphBuilder,
    input: SegIn,
    output: SegOut,
) -> Result<(), BuildError> {
    let entry = input.typed::<T>(g, &output)?;
    let chain = match &output {
        SegOut::Port(c) => port_terminal(g.outlet::<T>(PortId(*c))?),
        SegOut::Out(_) => out_terminal::<T>(),
    };
    add_segment(g, entry, chain, output);
    Ok(())
}

/// Adds the stage for `entry → chain → output`: a plain fused stage for port to port,
/// otherwise a [`Segment`].
pub(crate) fn add_segment<A: Send + 'static>(
    g: &mut GraphBuilder,
    entry: Entry<A>,
    chain: Cont<A>,
    output: SegOut,
) {
    match (entry, output) {
        (Entry::Port(inlet), SegOut::Port(outlet)) => {
            g.add_stage(super::fused::Fused::new(inlet, outlet, chain));
        }
        (entry, exit) => {
            g.add_stage(Segment::new(entry, chain, exit));
        }
    }
}

/// What [`Segment::pump`] ended with.
enum Pumped {
    /// Every element asked for was taken.
    Moved,
    /// The entry has nothing now.
    Empty,
    /// The entry ended; everything before was delivered.
    Complete,
    /// The entry's upstream failed.
    Failed,
    /// The operators are done (`take`), or the exit's subscriber panicked.
    Finished,
}

/// Takes up to `n` elements from a ring or iterator entry through `chain` (whose last
/// continuation reaches the exit through `ctx`).
#[inline]
fn pump<A: Send + 'static>(
    entry: &mut Entry<A>,
    chain: &mut Cont<A>,
    ctx: &mut Ctx<'_>,
    n: usize,
) -> Pumped {
    match entry {
        Entry::Ring(r) => {
            for _ in 0..n {
                match r.poll() {
                    Polled::Item(x) => match chain(ctx, x) {
                        Sent::Pushed | Sent::Dropped => {}
                        Sent::PushedLast | Sent::Done => return Pumped::Finished,
                    },
                    Polled::Empty => return Pumped::Empty,
                    Polled::Complete => return Pumped::Complete,
                    Polled::Failed => return Pumped::Failed,
                }
            }
            Pumped::Moved
        }
        Entry::Iter {
            iter,
            next,
            started,
        } => {
            if !*started {
                *started = true;
                *next = iter.next();
            }
            for _ in 0..n {
                let Some(x) = next.take() else {
                    return Pumped::Complete;
                };
                *next = iter.next();
                match chain(ctx, x) {
                    Sent::Pushed | Sent::Dropped => {}
                    Sent::PushedLast | Sent::Done => return Pumped::Finished,
                }
            }
            if next.is_none() {
                return Pumped::Complete; // the last element completes the segment
            }
            Pumped::Moved
        }
        Entry::Port(_) => Pumped::Empty,
    }
}

/// The stage of a segment with at least one end that is not a port (see the module docs).
pub(crate) struct Segment<A> {
    entry: Entry<A>,
    chain: Cont<A>,
    exit: SegExit,
    /// This stage's own notifier (to come back after a bounded loop).
    me: Option<Notifier>,
    /// An upstream failure waits for the island's park (out-port exit only).
    failing: bool,
    done: bool,
}

enum SegExit {
    Port(Outlet<()>),
    Out(Box<dyn Exit>),
}

impl<A> fmt::Debug for Segment<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segment")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<A: Send + 'static> Segment<A> {
    pub(crate) fn new(entry: Entry<A>, chain: Cont<A>, exit: SegOut) -> Self {
        let exit = match exit {
            SegOut::Port(c) => SegExit::Port(Outlet {
                id: c,
                _t: PhantomData,
            }),
            SegOut::Out(e) => SegExit::Out(e),
        };
        Segment {
            entry,
            chain,
            exit,
            me: None,
            failing: false,
            done: false,
        }
    }

    /// Runs the operators on `x`, lending them the exit.
    #[inline]
    fn run_chain(&mut self, ctx: &mut Ctx<'_>, x: A) -> Sent {
        match &mut self.exit {
            SegExit::Port(_) => (self.chain)(ctx, x),
            SegExit::Out(e) => (self.chain)(&mut ctx.with_exit(e.as_any()), x),
        }
    }

    /// Elements the exit takes now.
    #[inline]
    fn room(&mut self, ctx: &Ctx<'_>) -> usize {
        match &mut self.exit {
            SegExit::Port(o) => usize::from(ctx.is_available(*o)),
            SegExit::Out(e) => e.room(),
        }
    }

    /// Moves elements while the exit has room and the entry has them (at most one ring's
    /// worth per call; then it comes back through its own mailbox).
    fn drive(&mut self, ctx: &mut Ctx<'_>) {
        if self.done {
            return;
        }
        let mut budget = match &self.entry {
            Entry::Ring(r) => r.size(),
            Entry::Iter { .. } => match &self.exit {
                SegExit::Out(_) => usize::MAX, // bounded by the boundary's demand
                SegExit::Port(_) => 1,
            },
            Entry::Port(_) => 1,
        };
        // Downstream's cancel (or bad request) first: it may have come while there is room.
        if let SegExit::Out(e) = &mut self.exit {
            if let Some(c) = e.closed() {
                self.exit_closed(c, ctx);
                return;
            }
        }
        loop {
            let room = self.room(ctx);
            if room == 0 {
                self.stalled(ctx);
                return;
            }
            if let Entry::Port(inlet) = &self.entry {
                let inlet = *inlet;
                if !ctx.has_been_pulled(inlet) && !ctx.is_inlet_closed(inlet) {
                    ctx.pull(inlet);
                }
                return;
            }
            if budget == 0 {
                self.come_back(ctx);
                return;
            }
            let n = room.min(budget);
            budget -= n;
            // The operators and the source iterator are user code: a panic fails the segment
            // (its exit gets the error after what was pushed before).
            let pumped = match catch_unwind(AssertUnwindSafe(|| self.pump(ctx, n))) {
                Ok(p) => p,
                Err(p) => {
                    self.panicked(p, ctx);
                    return;
                }
            };
            match pumped {
                Pumped::Moved => {}
                Pumped::Empty => return,
                Pumped::Complete => {
                    self.complete(ctx);
                    return;
                }
                Pumped::Failed => {
                    self.upstream_failed(ctx);
                    return;
                }
                Pumped::Finished => {
                    self.cancel_entry();
                    self.complete(ctx);
                    return;
                }
            }
        }
    }

    /// The exit has no room: it may have closed; an upstream failure is acted on (nothing more
    /// can be delivered now: eager), and so is a completion once the ring is drained (no
    /// demand is needed for it).
    fn stalled(&mut self, ctx: &mut Ctx<'_>) {
        if let SegExit::Out(e) = &mut self.exit {
            if let Some(c) = e.closed() {
                self.exit_closed(c, ctx);
                return;
            }
        }
        match &mut self.entry {
            Entry::Ring(r) => {
                if r.failed() {
                    match self.exit {
                        SegExit::Out(_) => self.upstream_failed(ctx),
                        SegExit::Port(_) => self.failing = true,
                    }
                } else if r.at_end() {
                    self.complete(ctx);
                }
            }
            Entry::Iter { next, started, .. } => {
                if *started && next.is_none() {
                    self.complete(ctx);
                }
            }
            Entry::Port(_) => {}
        }
    }

    /// Takes up to `n` elements from a ring or iterator entry through the operators into the
    /// exit, which has room for `n`.
    #[inline]
    fn pump(&mut self, ctx: &mut Ctx<'_>, n: usize) -> Pumped {
        match &mut self.exit {
            SegExit::Port(_) => pump(&mut self.entry, &mut self.chain, ctx, n),
            SegExit::Out(e) => {
                let mut ctx = ctx.with_exit(e.as_any());
                pump(&mut self.entry, &mut self.chain, &mut ctx, n)
            }
        }
    }

    /// Posts to itself: the loop goes on in the island's next round (counted in its budget).
    fn come_back(&mut self, ctx: &mut Ctx<'_>) {
        self.me.get_or_insert_with(|| ctx.notifier()).notify();
    }

    /// Acts on what the operators did with an element; `true` when the segment finished.
    #[inline]
    fn after(&mut self, sent: Sent, ctx: &mut Ctx<'_>) -> bool {
        match sent {
            Sent::Pushed | Sent::Dropped => false,
            Sent::PushedLast | Sent::Done => {
                // A `take` reached its count (or a subscriber panicked: its exit ignores this).
                self.cancel_entry();
                self.complete(ctx);
                true
            }
        }
    }

    fn cancel_entry(&mut self) {
        match &mut self.entry {
            Entry::Ring(r) => r.cancel(),
            Entry::Iter { next, started, .. } => {
                *started = true;
                *next = None;
            }
            Entry::Port(_) => {} // closed with the stage's ports
        }
    }

    /// Completes the exit (after every element) and finishes.
    fn complete(&mut self, ctx: &mut Ctx<'_>) {
        if let Entry::Ring(r) = &mut self.entry {
            r.close();
        }
        match &mut self.exit {
            SegExit::Out(e) => e.complete(),
            SegExit::Port(_) => {} // complete_stage completes the out-port
        }
        self.finish(None, ctx);
    }

    /// The entry's upstream failed: buffered input is dropped, the exit fails.
    fn upstream_failed(&mut self, ctx: &mut Ctx<'_>) {
        let error = match &mut self.entry {
            Entry::Ring(r) => {
                let e = r.error();
                r.close();
                e
            }
            Entry::Port(_) | Entry::Iter { .. } => Error::msg("the upstream failed"),
        };
        self.fail(error, ctx);
    }

    fn fail(&mut self, error: Error, ctx: &mut Ctx<'_>) {
        match &mut self.exit {
            SegExit::Out(e) => {
                e.fail(error);
                self.finish(None, ctx);
            }
            SegExit::Port(_) => self.finish(Some(error), ctx),
        }
    }

    /// An operator (or the source iterator) panicked: the entry is cancelled and the exit
    /// fails with [`IslandError::StagePanicked`].
    fn panicked(&mut self, payload: Box<dyn Any + Send>, ctx: &mut Ctx<'_>) {
        let error = Error::new(IslandError::StagePanicked {
            stage: "fused operators",
            message: report::panic_message(&*payload),
        });
        self.cancel_entry();
        self.fail(error, ctx);
    }

    /// The exit closed: the entry is cancelled.
    fn exit_closed(&mut self, closing: Closing, ctx: &mut Ctx<'_>) {
        self.cancel_entry();
        if let SegExit::Out(e) = &mut self.exit {
            match closing {
                Closing::Cancelled => e.stop(),
                Closing::Failed(error) => e.fail(error),
            }
        }
        self.finish(None, ctx);
    }

    /// Closes every port (failing the out-port with `error`) and lets the stage be finalised.
    fn finish(&mut self, error: Option<Error>, ctx: &mut Ctx<'_>) {
        self.done = true;
        match error {
            Some(e) => ctx.fail_stage(e),
            None => ctx.complete_stage(),
        }
        ctx.set_keep_going(false);
    }
}

impl<A: Send + 'static> Stage for Segment<A> {
    fn ports(&self, ports: &mut Ports) {
        if let Entry::Port(inlet) = &self.entry {
            ports.inlet(*inlet);
        }
        if let SegExit::Port(o) = &self.exit {
            ports.outlet_id(o.id);
        }
    }

    fn name(&self) -> &'static str {
        "fused operators"
    }

    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        // Alive until it finishes, whatever its ports (it may have none).
        ctx.set_keep_going(true);
        ctx.call_on_park();
        if let SegExit::Out(e) = &mut self.exit {
            e.start(ctx);
        }
        if let Entry::Ring(r) = &mut self.entry {
            if let Err(error) = r.start(ctx) {
                self.cancel_entry();
                self.fail(error, ctx);
                return;
            }
        }
        // The first moves happen on the island, not on the thread that starts it.
        self.come_back(ctx);
    }

    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let Entry::Port(inlet) = self.entry else {
            return;
        };
        let x = ctx.grab(inlet);
        if self.done {
            return;
        }
        let sent = match catch_unwind(AssertUnwindSafe(|| self.run_chain(ctx, x))) {
            Ok(sent) => sent,
            Err(p) => {
                self.panicked(p, ctx);
                return;
            }
        };
        if !self.after(sent, ctx) {
            self.drive(ctx);
        }
    }

    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.drive(ctx);
    }

    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        if let Entry::Ring(r) = &mut self.entry {
            r.refresh();
        }
        self.drive(ctx);
    }

    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if !self.done {
            self.complete(ctx);
        }
    }

    fn on_upstream_failure(&mut self, _: PortId, error: Error, ctx: &mut Ctx<'_>) {
        if !self.done {
            self.fail(error, ctx);
        }
    }

    fn on_downstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if !self.done {
            self.cancel_entry();
            self.finish(None, ctx);
        }
    }

    fn on_park(&mut self, end: RunEnd, ctx: &mut Ctx<'_>) {
        if end == RunEnd::Park && !self.done && !self.failing {
            let wants = self.room(ctx) > 0;
            if let Entry::Ring(r) = &mut self.entry {
                if wants && r.linger() {
                    self.drive(ctx);
                }
            }
        }
        if let SegExit::Out(e) = &mut self.exit {
            e.on_park(end);
        }
        if self.failing && end == RunEnd::Park && !self.done {
            self.upstream_failed(ctx);
        }
    }

    fn post_stop(&mut self) {
        if !self.done {
            self.done = true;
            self.cancel_entry();
            if let SegExit::Out(e) = &mut self.exit {
                e.stop();
            }
        }
    }
}
