//! Where a segment's elements go: the [`Exit`] trait, the operator fused into the exit after
//! it ([`OpExit`]), and the out-port exit ([`PortExit`]).
//!
//! A flow is materialised from its end: the last part of the island (an out-port, a
//! boundary's output side, the subscriber) is an exit; each operator before it wraps the exit
//! after it in an [`OpExit`]; the segment's entry (an in-port, a boundary's input side, an
//! iterator) then drives that one composed exit. Every exit is a concrete type, so the whole
//! chain is one statically dispatched call tree that the compiler inlines into the segment's
//! loop; the only trait object is at a [`boxed`](super::Flow::boxed) flow's edge.
//!
//! [`OpExit`] is where the operator contract of [`Operator`](super::Operator) is kept, for
//! every operator, once: output that does not fit is held and delivered on
//! [`resume`](Exit::resume); an operator's `Done` completes the exit after it once nothing is
//! pending; a `Fail` fails it.

use rs_api::Error;

use super::operator::{Emit, Operator, Signal};
use crate::island::{Ctx, IslandError, Outlet, RunEnd};

/// Whether an exit takes more input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(unreachable_pub)] // sealed: reachable only through `Shape`'s hidden method
pub enum Step {
    /// It takes more (when it has room).
    More,
    /// No more input is wanted: it has ended, or it is delivering what it holds and ends
    /// after that ([`Exit::has_pending`]).
    Stop,
}

/// How an exit closed from downstream.
#[derive(Debug)]
#[allow(unreachable_pub)]
pub enum Closing {
    /// Downstream cancelled: no signal.
    Cancelled,
    /// Downstream broke a rule (`request(0)`): it gets this error.
    Failed(Error),
}

/// Where a segment's elements go (see the [module docs](self)). Implemented by this crate only.
///
/// The calls a segment makes: [`start`](Exit::start) once; then, while it returns
/// [`Step::More`], [`push`](Exit::push) at most [`room`](Exit::room) elements before asking
/// `room` again; at the entry's end [`complete`](Exit::complete) or [`fail`](Exit::fail);
/// whenever it runs while [`has_pending`](Exit::has_pending), [`resume`](Exit::resume). The
/// exit has ended when it stopped and nothing is pending.
#[allow(unreachable_pub)] // sealed: reachable only through `Shape`'s hidden method
pub trait Exit<T>: Send {
    /// Registers with the island (a subscriber gets `on_subscribe`) and runs the operators'
    /// `on_start`; [`Step::Stop`] if the chain finished at once.
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step;
    /// Elements it takes now without asking again; 0 while something is pending or
    /// downstream has no demand (then [`closed`](Exit::closed) says whether for good).
    fn room(&mut self, cx: &Ctx<'_>) -> usize;
    /// Takes one element (the segment asked [`room`](Exit::room) first).
    fn push(&mut self, cx: &mut Ctx<'_>, item: T) -> Step;
    /// The entry completed, after everything it delivered.
    fn complete(&mut self, cx: &mut Ctx<'_>);
    /// The entry failed.
    fn fail(&mut self, cx: &mut Ctx<'_>, error: Error);
    /// Whether output is held, waiting for room, before the exit can end.
    fn has_pending(&self) -> bool;
    /// Delivers what is held, as far as there is room; [`Step::Stop`] once no more input is
    /// wanted.
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step;
    /// Whether downstream closed (cancelled, or a bad request).
    fn closed(&mut self) -> Option<Closing>;
    /// The connection of the out-port it ends in, if it does (an out-port's demand is one
    /// pull at a time, known only to the interpreter: an upstream failure waits for the
    /// island's park there).
    fn port_id(&self) -> Option<u32> {
        None
    }
    /// Fails downstream with `error` past every operator (one of them panicked: none may
    /// recover from it).
    fn abort(&mut self, cx: &mut Ctx<'_>, error: Error);
    /// Whether it is a boundary's output side.
    fn is_boundary(&self) -> bool {
        false
    }
    /// The island's run ends (a boundary flushes).
    fn on_park(&mut self, end: RunEnd);
    /// The segment stops without a terminal signal (downstream closed, or the island was
    /// dropped): let go of everything.
    fn stop(&mut self);
}

impl<T, X: Exit<T> + ?Sized> Exit<T> for Box<X> {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        (**self).start(cx)
    }
    #[inline]
    fn room(&mut self, cx: &Ctx<'_>) -> usize {
        (**self).room(cx)
    }
    #[inline]
    fn push(&mut self, cx: &mut Ctx<'_>, item: T) -> Step {
        (**self).push(cx, item)
    }
    fn complete(&mut self, cx: &mut Ctx<'_>) {
        (**self).complete(cx)
    }
    fn fail(&mut self, cx: &mut Ctx<'_>, error: Error) {
        (**self).fail(cx, error)
    }
    fn has_pending(&self) -> bool {
        (**self).has_pending()
    }
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        (**self).resume(cx)
    }
    fn closed(&mut self) -> Option<Closing> {
        (**self).closed()
    }
    fn port_id(&self) -> Option<u32> {
        (**self).port_id()
    }
    fn abort(&mut self, cx: &mut Ctx<'_>, error: Error) {
        (**self).abort(cx, error)
    }
    fn is_boundary(&self) -> bool {
        (**self).is_boundary()
    }
    fn on_park(&mut self, end: RunEnd) {
        (**self).on_park(end)
    }
    fn stop(&mut self) {
        (**self).stop()
    }
}

/// The cold path of an emission without room: the operator broke its contract.
#[cold]
#[inline(never)]
pub(crate) fn emitted_without_room() -> ! {
    std::panic::panic_any(IslandError::PortMisuse {
        op: "emit",
        port: u32::MAX,
        reason: "an operator emitted while downstream had no room (check Emit::has_room)",
    })
}

/// The exit after an operator, as the operator sees it: its [`Emit`].
struct Bound<'a, 'b, X> {
    next: &'a mut X,
    cx: &'a mut Ctx<'b>,
    /// The exit stopped taking input.
    stopped: bool,
}

impl<T, X: Exit<T>> Emit<T> for Bound<'_, '_, X> {
    #[inline(always)]
    fn emit(&mut self, item: T) -> Signal {
        if self.stopped {
            drop(item);
            return Signal::Done;
        }
        match self.next.push(self.cx, item) {
            Step::More => Signal::Continue,
            Step::Stop => {
                self.stopped = true;
                Signal::Done
            }
        }
    }

    #[inline(always)]
    fn has_room(&mut self) -> bool {
        !self.stopped && self.next.room(self.cx) > 0
    }
}

/// Where an [`OpExit`]'s operator is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpState {
    /// Taking input.
    Running,
    /// Finished (its `Done`, or after completion) with output still held: the exit after it
    /// completes once that is delivered.
    Draining,
    /// Out of the picture: the exit after it is on its own (it ended, or ends by itself).
    Passed,
}

/// An operator fused in front of the exit after it (see the [module docs](self)).
pub(crate) struct OpExit<O, X> {
    op: O,
    next: X,
    state: OpState,
}

impl<O, X> OpExit<O, X> {
    /// `op` in front of `next`.
    pub(crate) fn new(op: O, next: X) -> Self {
        OpExit {
            op,
            next,
            state: OpState::Running,
        }
    }
}

impl<O, X> std::fmt::Debug for OpExit<O, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpExit")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<O, X> OpExit<O, X> {
    /// Acts on what the operator returned (`stopped`: the exit after it stopped meanwhile).
    #[inline(always)]
    fn settle<I>(&mut self, cx: &mut Ctx<'_>, signal: Signal, stopped: bool) -> Step
    where
        O: Operator<I>,
        X: Exit<O::Out>,
    {
        if stopped {
            self.state = OpState::Passed;
            return Step::Stop;
        }
        match signal {
            Signal::Continue => Step::More,
            Signal::Done => {
                self.finish_op::<I>(cx);
                Step::Stop
            }
            Signal::Fail(e) => {
                self.state = OpState::Passed;
                self.next.fail(cx, e);
                Step::Stop
            }
        }
    }

    /// The operator finished its output: the exit after it completes once nothing is held.
    fn finish_op<I>(&mut self, cx: &mut Ctx<'_>)
    where
        O: Operator<I>,
        X: Exit<O::Out>,
    {
        if self.op.has_pending() {
            self.state = OpState::Draining;
        } else {
            self.state = OpState::Passed;
            self.next.complete(cx);
        }
    }

    /// Acts on the operator's answer to a terminal signal (completion, error).
    fn settle_end<I>(&mut self, cx: &mut Ctx<'_>, signal: Signal, stopped: bool)
    where
        O: Operator<I>,
        X: Exit<O::Out>,
    {
        if stopped {
            self.state = OpState::Passed;
            return;
        }
        match signal {
            Signal::Fail(e) => {
                self.state = OpState::Passed;
                self.next.fail(cx, e);
            }
            Signal::Continue | Signal::Done => self.finish_op::<I>(cx),
        }
    }

    /// Delivers what the exit after it holds; `false` if it stopped.
    fn resume_next<I>(&mut self, cx: &mut Ctx<'_>) -> bool
    where
        O: Operator<I>,
        X: Exit<O::Out>,
    {
        if self.next.has_pending() && self.next.resume(cx) == Step::Stop {
            self.state = OpState::Passed;
            return false;
        }
        true
    }
}

impl<I, O, X> Exit<I> for OpExit<O, X>
where
    I: Send,
    O: Operator<I>,
    X: Exit<O::Out>,
{
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        if self.next.start(cx) == Step::Stop {
            self.state = OpState::Passed;
            return Step::Stop;
        }
        let mut out = Bound {
            next: &mut self.next,
            cx: &mut *cx,
            stopped: false,
        };
        let s = self.op.on_start(&mut out);
        let stopped = out.stopped;
        self.settle::<I>(cx, s, stopped)
    }

    #[inline(always)]
    fn room(&mut self, cx: &Ctx<'_>) -> usize {
        if self.state != OpState::Running || self.op.has_pending() {
            return 0;
        }
        self.next.room(cx)
    }

    #[inline(always)]
    fn push(&mut self, cx: &mut Ctx<'_>, item: I) -> Step {
        if self.state != OpState::Running {
            drop(item);
            return Step::Stop;
        }
        let mut out = Bound {
            next: &mut self.next,
            cx: &mut *cx,
            stopped: false,
        };
        let s = self.op.on_next(item, &mut out);
        let stopped = out.stopped;
        self.settle::<I>(cx, s, stopped)
    }

    fn complete(&mut self, cx: &mut Ctx<'_>) {
        if self.state != OpState::Running {
            return;
        }
        let mut out = Bound {
            next: &mut self.next,
            cx: &mut *cx,
            stopped: false,
        };
        let s = self.op.on_complete(&mut out);
        let stopped = out.stopped;
        self.settle_end::<I>(cx, s, stopped);
    }

    fn fail(&mut self, cx: &mut Ctx<'_>, error: Error) {
        if self.state != OpState::Running {
            return; // finished before: upstream was cancelled, its failure comes too late
        }
        let mut out = Bound {
            next: &mut self.next,
            cx: &mut *cx,
            stopped: false,
        };
        let s = self.op.on_error(error, &mut out);
        let stopped = out.stopped;
        self.settle_end::<I>(cx, s, stopped);
    }

    #[inline]
    fn has_pending(&self) -> bool {
        match self.state {
            OpState::Running => self.op.has_pending() || self.next.has_pending(),
            OpState::Draining => true,
            OpState::Passed => self.next.has_pending(),
        }
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        match self.state {
            OpState::Passed => {
                if self.next.has_pending() {
                    let _ = self.next.resume(cx);
                }
                Step::Stop
            }
            OpState::Running => {
                if !self.resume_next::<I>(cx) {
                    return Step::Stop;
                }
                if !self.op.has_pending() {
                    return Step::More;
                }
                let mut out = Bound {
                    next: &mut self.next,
                    cx: &mut *cx,
                    stopped: false,
                };
                let s = self.op.on_room(&mut out);
                let stopped = out.stopped;
                self.settle::<I>(cx, s, stopped)
            }
            OpState::Draining => {
                if !self.resume_next::<I>(cx) {
                    return Step::Stop;
                }
                let mut out = Bound {
                    next: &mut self.next,
                    cx: &mut *cx,
                    stopped: false,
                };
                let s = self.op.on_room(&mut out);
                let stopped = out.stopped;
                if stopped {
                    self.state = OpState::Passed;
                    return Step::Stop;
                }
                match s {
                    Signal::Fail(e) => {
                        self.state = OpState::Passed;
                        self.next.fail(cx, e);
                    }
                    Signal::Continue | Signal::Done => {
                        if !self.op.has_pending() {
                            self.state = OpState::Passed;
                            self.next.complete(cx);
                        }
                    }
                }
                Step::Stop
            }
        }
    }

    fn closed(&mut self) -> Option<Closing> {
        self.next.closed()
    }

    fn port_id(&self) -> Option<u32> {
        self.next.port_id()
    }

    fn abort(&mut self, cx: &mut Ctx<'_>, error: Error) {
        self.state = OpState::Passed;
        self.next.abort(cx, error);
    }

    fn is_boundary(&self) -> bool {
        self.next.is_boundary()
    }

    fn on_park(&mut self, end: RunEnd) {
        self.next.on_park(end);
    }

    fn stop(&mut self) {
        self.state = OpState::Passed;
        self.next.stop();
    }
}

/// The exit into an out-port of the island: one element per pull of downstream.
pub(crate) struct PortExit<T> {
    outlet: Outlet<T>,
}

impl<T> std::fmt::Debug for PortExit<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PortExit").field(&self.outlet).finish()
    }
}

impl<T> PortExit<T> {
    pub(crate) fn new(outlet: Outlet<T>) -> Self {
        PortExit { outlet }
    }
}

impl<T: Send + 'static> Exit<T> for PortExit<T> {
    fn start(&mut self, _: &mut Ctx<'_>) -> Step {
        Step::More
    }
    #[inline(always)]
    fn room(&mut self, cx: &Ctx<'_>) -> usize {
        usize::from(cx.is_available(self.outlet))
    }
    #[inline(always)]
    fn push(&mut self, cx: &mut Ctx<'_>, item: T) -> Step {
        cx.push(self.outlet, item);
        Step::More
    }
    fn complete(&mut self, cx: &mut Ctx<'_>) {
        cx.complete(self.outlet);
    }
    fn fail(&mut self, cx: &mut Ctx<'_>, error: Error) {
        cx.fail(self.outlet, error);
    }
    #[inline(always)]
    fn has_pending(&self) -> bool {
        false
    }
    fn resume(&mut self, _: &mut Ctx<'_>) -> Step {
        Step::More
    }
    fn closed(&mut self) -> Option<Closing> {
        None // a cancel arrives as the stage's `on_downstream_finish`
    }
    fn port_id(&self) -> Option<u32> {
        Some(self.outlet.id().index())
    }
    fn abort(&mut self, cx: &mut Ctx<'_>, error: Error) {
        cx.fail(self.outlet, error);
    }
    fn on_park(&mut self, _: RunEnd) {}
    fn stop(&mut self) {}
}
