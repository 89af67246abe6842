//! Fusing linear operators into one stage: `map`, `filter`, `take`, `skip`, `scan` and
//! `identity` written one after another on a [`Flow`](super::Flow) run as **one** interpreter
//! stage, whose per-element work is a chain of continuations: each operator calls the next
//! through one indirect call, with the element on the stack. No interpreter event, no port, no
//! slot per fused hop — the function call per hop of the "why".
//!
//! The chain is built from its end when a flow is materialised: the last operator's
//! continuation pushes to the stage's out-port, and each operator before it wraps the
//! continuation of the one after it. Operators are kept type-erased in the blueprint (a `Flow<T>`
//! does not carry the types of its fused operators); the types are checked once per
//! materialisation, when the continuations are unwrapped, never per element. A segment is cut
//! after [`MAX_FUSED`] operators, so the call depth stays bounded.

use std::any::Any;
use std::fmt;
use std::sync::Arc as StdArc;

use super::interpreter::{BuildError, GraphBuilder};
use super::segment::{add_segment, out_terminal, port_terminal, Exit, SegIn, SegOut};
use super::stage::{Ctx, Inlet, Outlet, PortId, Ports, Stage};

/// Operators fused into one stage at most (then a new fused stage starts).
pub const MAX_FUSED: usize = 64;

/// What the rest of the chain did with an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Pushed downstream.
    Pushed,
    /// Dropped (filtered or skipped): the stage pulls again.
    Dropped,
    /// Pushed, and the chain is done (a `take` reached its count): the stage completes.
    PushedLast,
    /// Not pushed, and the chain is done: the stage completes.
    Done,
}

/// A continuation: what happens to an element of type `T` from here to the out-port.
pub(crate) type Cont<T> = Box<dyn for<'a, 'b> FnMut(&'a mut Ctx<'b>, T) -> Sent + Send>;

/// Builds an operator's continuation from the next one's (fresh operator state each time).
type Wrap = dyn Fn(Box<dyn Any + Send>) -> Box<dyn Any + Send> + Send + Sync;
/// Makes the connection after a segment ending with this operator, and the continuation
/// that pushes to it: `(Cont<U> as Any, connection)`.
type Terminal = dyn Fn(&mut GraphBuilder) -> (Box<dyn Any + Send>, u32) + Send + Sync;
/// The continuation that hands this operator's output to a segment's [`Exit`]: `Cont<U>`.
type OutTerminal = dyn Fn() -> Box<dyn Any + Send> + Send + Sync;
/// Makes the stage of a segment starting with this operator, from its entry, its chain and
/// its exit.
type MakeStage = dyn Fn(&mut GraphBuilder, SegIn, Box<dyn Any + Send>, SegOut) -> Result<(), BuildError>
    + Send
    + Sync;

/// One fusable operator of a blueprint, type-erased.
#[derive(Clone)]
pub(crate) struct Op {
    wrap: StdArc<Wrap>,
    terminal: StdArc<Terminal>,
    out_terminal: StdArc<OutTerminal>,
    stage: StdArc<MakeStage>,
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Op")
    }
}

impl Op {
    /// An operator from `A` to `B`; `make` builds its continuation from the next one's.
    pub(crate) fn new<A, B, F>(make: F) -> Op
    where
        A: Send + 'static,
        B: Send + 'static,
        F: Fn(Cont<B>) -> Cont<A> + Send + Sync + 'static,
    {
        Op {
            wrap: StdArc::new(move |next: Box<dyn Any + Send>| {
                let next = *next
                    .downcast::<Cont<B>>()
                    .expect("fused operators are chained by type");
                Box::new(make(next)) as Box<dyn Any + Send>
            }),
            terminal: StdArc::new(|g: &mut GraphBuilder| {
                let (out, inlet) = g.connection::<B>();
                let push: Cont<B> = port_terminal(out);
                (Box::new(push) as Box<dyn Any + Send>, inlet.id().index())
            }),
            out_terminal: StdArc::new(|| Box::new(out_terminal::<B>()) as Box<dyn Any + Send>),
            stage: StdArc::new(
                |g: &mut GraphBuilder, input: SegIn, chain: Box<dyn Any + Send>, output: SegOut| {
                    let entry = input.typed::<A>(g, &output)?;
                    let chain = *chain
                        .downcast::<Cont<A>>()
                        .expect("fused operators are chained by type");
                    add_segment(g, entry, chain, output);
                    Ok(())
                },
            ),
        }
    }
}

/// Materialises a segment of fused operators fed by `input`, ending in `exit` if given (a
/// boundary's output side, a subscriber), else in a new connection, which it returns.
pub(crate) fn materialise(
    ops: &[Op],
    g: &mut GraphBuilder,
    input: SegIn,
    mut exit: Option<Box<dyn Exit>>,
) -> Result<Option<u32>, BuildError> {
    let mut input = input;
    let chunks = ops.chunks(MAX_FUSED).count();
    let mut last_output = None;
    for (k, segment) in ops.chunks(MAX_FUSED).enumerate() {
        let last = segment.last().expect("chunks are not empty");
        let exit_here = if k + 1 == chunks { exit.take() } else { None };
        let (mut chain, output) = match exit_here {
            Some(e) => ((last.out_terminal)(), SegOut::Out(e)),
            None => {
                let (chain, c) = (last.terminal)(g);
                last_output = Some(c);
                (chain, SegOut::Port(c))
            }
        };
        for op in segment.iter().rev() {
            chain = (op.wrap)(chain);
        }
        let next = match &output {
            SegOut::Port(c) => SegIn::Port(*c),
            SegOut::Out(_) => SegIn::Port(u32::MAX),
        };
        (segment[0].stage)(g, input, chain, output)?;
        input = next;
    }
    Ok(last_output)
}

/// The stage running one fused segment from an in-port to an out-port.
pub(crate) struct Fused<A> {
    inlet: Inlet<A>,
    outlet: u32,
    chain: Cont<A>,
}

impl<A> Fused<A> {
    pub(crate) fn new(inlet: Inlet<A>, outlet: u32, chain: Cont<A>) -> Self {
        Fused {
            inlet,
            outlet,
            chain,
        }
    }
}

impl<A> fmt::Debug for Fused<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fused").finish_non_exhaustive()
    }
}

impl<A: Send + 'static> Stage for Fused<A> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet).outlet_id(self.outlet);
    }

    fn name(&self) -> &'static str {
        "fused operators"
    }

    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        match (self.chain)(ctx, x) {
            Sent::Pushed => {}
            Sent::Dropped => ctx.pull(self.inlet),
            Sent::PushedLast | Sent::Done => ctx.complete_stage(),
        }
    }

    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
}

/// `map(f)`.
pub(crate) fn map<A, B, F>(f: StdArc<F>) -> Op
where
    A: Send + 'static,
    B: Send + 'static,
    F: Fn(A) -> B + Send + Sync + 'static,
{
    Op::new(move |next: Cont<B>| {
        let f = f.clone();
        map_cont(move |x| f(x), next)
    })
}

/// The continuation of `map(f)` in front of `next`.
pub(crate) fn map_cont<A, B, F>(mut f: F, mut next: Cont<B>) -> Cont<A>
where
    A: Send + 'static,
    B: Send + 'static,
    F: FnMut(A) -> B + Send + 'static,
{
    Box::new(move |ctx: &mut Ctx<'_>, x: A| next(ctx, f(x)))
}

/// `identity()`.
pub(crate) fn identity<A: Send + 'static>() -> Op {
    Op::new(identity_cont::<A>)
}

/// The continuation of `identity()` in front of `next`: a call, like every other operator's.
pub(crate) fn identity_cont<A: Send + 'static>(mut next: Cont<A>) -> Cont<A> {
    Box::new(move |ctx: &mut Ctx<'_>, x: A| next(ctx, x))
}

/// `filter(p)`.
pub(crate) fn filter<A, F>(p: StdArc<F>) -> Op
where
    A: Send + 'static,
    F: Fn(&A) -> bool + Send + Sync + 'static,
{
    Op::new(move |next: Cont<A>| {
        let p = p.clone();
        filter_cont(move |x: &A| p(x), next)
    })
}

/// The continuation of `filter(p)` in front of `next`.
pub(crate) fn filter_cont<A, F>(mut p: F, mut next: Cont<A>) -> Cont<A>
where
    A: Send + 'static,
    F: FnMut(&A) -> bool + Send + 'static,
{
    Box::new(
        move |ctx: &mut Ctx<'_>, x: A| {
            if p(&x) {
                next(ctx, x)
            } else {
                Sent::Dropped
            }
        },
    )
}

/// `take(n)` for `n > 0` (`take(0)` is a stage of its own: it completes at start).
pub(crate) fn take<A: Send + 'static>(n: u64) -> Op {
    debug_assert!(n > 0);
    Op::new(move |next: Cont<A>| take_cont(n, next))
}

/// The continuation of `take(n)`, `n > 0`, in front of `next`.
pub(crate) fn take_cont<A: Send + 'static>(n: u64, mut next: Cont<A>) -> Cont<A> {
    let mut left = n;
    Box::new(move |ctx: &mut Ctx<'_>, x: A| {
        if left == 0 {
            return Sent::Done;
        }
        left -= 1;
        let sent = next(ctx, x);
        if left > 0 {
            return sent;
        }
        match sent {
            Sent::Pushed | Sent::PushedLast => Sent::PushedLast,
            Sent::Dropped | Sent::Done => Sent::Done,
        }
    })
}

/// `skip(n)`.
pub(crate) fn skip<A: Send + 'static>(n: u64) -> Op {
    Op::new(move |next: Cont<A>| skip_cont(n, next))
}

/// The continuation of `skip(n)` in front of `next`.
pub(crate) fn skip_cont<A: Send + 'static>(n: u64, mut next: Cont<A>) -> Cont<A> {
    let mut left = n;
    Box::new(move |ctx: &mut Ctx<'_>, x: A| {
        if left > 0 {
            left -= 1;
            Sent::Dropped
        } else {
            next(ctx, x)
        }
    })
}

/// `scan(seed, f)`.
pub(crate) fn scan<A, S, F>(seed: S, f: StdArc<F>) -> Op
where
    A: Send + 'static,
    S: Clone + Send + Sync + 'static,
    F: Fn(&S, A) -> S + Send + Sync + 'static,
{
    Op::new(move |next: Cont<S>| {
        let f = f.clone();
        scan_cont(seed.clone(), move |acc: &S, x: A| f(acc, x), next)
    })
}

/// The continuation of `scan(seed, f)` in front of `next`.
pub(crate) fn scan_cont<A, S, F>(seed: S, mut f: F, mut next: Cont<S>) -> Cont<A>
where
    A: Send + 'static,
    S: Clone + Send + 'static,
    F: FnMut(&S, A) -> S + Send + 'static,
{
    let mut acc = seed;
    Box::new(move |ctx: &mut Ctx<'_>, x: A| {
        acc = f(&acc, x);
        next(ctx, acc.clone())
    })
}

// ----- fusion by the graph builder ---------------------------------------------------------

/// A built-in linear stage handed over for fusion (see [`Stage::into_fusable`]): its in-port,
/// its out-port and its operator, type-erased.
///
/// [`GraphBuilder`] fuses every run of such stages connected one after another (at most
/// [`MAX_FUSED`] per run) into one stage whose per-element work is the chain of the operators'
/// functions, one direct call per hop, as [`Flow`](super::Flow) does; a stage alone in its run
/// stays the stage it was. Only the built-in stages make one (there is no public
/// constructor): their behaviour at the ports is fully known, so the fused stage behaves at its
/// two ports exactly as the run did (see [`GraphBuilder::set_fusion`]).
pub struct Fusable {
    pub(crate) inlet: u32,
    pub(crate) outlet: u32,
    pub(crate) op: Box<dyn FusableOp>,
}

impl fmt::Debug for Fusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fusable")
            .field("stage", &self.op.name())
            .field("inlet", &self.inlet)
            .field("outlet", &self.outlet)
            .finish()
    }
}

/// Makes the stage of a fused run from its in-port, its out-port and its chain (`Cont<A>`).
pub(crate) type MakeFused = fn(u32, u32, Box<dyn Any + Send>) -> Box<dyn Stage>;

/// One fusable operator: the stage it was, and how to chain it.
pub(crate) trait FusableOp: Send {
    /// The stage's name.
    fn name(&self) -> &'static str;
    /// Back to the stage it was (a run of one).
    fn into_stage(self: Box<Self>) -> Box<dyn Stage>;
    /// Its continuation (`Cont<A>`) in front of the next one's (`Cont<B>`).
    fn wrap(self: Box<Self>, next: Box<dyn Any + Send>) -> Box<dyn Any + Send>;
    /// The continuation pushing its output type to connection `outlet`.
    fn terminal(&self, outlet: u32) -> Box<dyn Any + Send>;
    /// The maker of a fused stage whose input is this operator's input type.
    fn stage_maker(&self) -> MakeFused;
}

/// A stage `S` from `A` to `B` with the function that turns it into a continuation.
struct Linear<S, A, B> {
    stage: S,
    cont: fn(S, Cont<B>) -> Cont<A>,
}

impl<S, A, B> FusableOp for Linear<S, A, B>
where
    S: Stage + 'static,
    A: Send + 'static,
    B: Send + 'static,
{
    fn name(&self) -> &'static str {
        self.stage.name()
    }

    fn into_stage(self: Box<Self>) -> Box<dyn Stage> {
        Box::new(self.stage)
    }

    fn wrap(self: Box<Self>, next: Box<dyn Any + Send>) -> Box<dyn Any + Send> {
        let next = *next
            .downcast::<Cont<B>>()
            .expect("fused stages are chained through typed connections");
        Box::new((self.cont)(self.stage, next))
    }

    fn terminal(&self, outlet: u32) -> Box<dyn Any + Send> {
        let outlet = Outlet::<B> {
            id: outlet,
            _t: std::marker::PhantomData,
        };
        Box::new(port_terminal(outlet))
    }

    fn stage_maker(&self) -> MakeFused {
        make_fused::<A>
    }
}

fn make_fused<A: Send + 'static>(
    inlet: u32,
    outlet: u32,
    chain: Box<dyn Any + Send>,
) -> Box<dyn Stage> {
    let chain = *chain
        .downcast::<Cont<A>>()
        .expect("fused stages are chained through typed connections");
    let inlet = Inlet::<A> {
        id: inlet,
        _t: std::marker::PhantomData,
    };
    Box::new(Fused::new(inlet, outlet, chain))
}

impl Fusable {
    /// `stage`, between `inlet` and `outlet`, whose operator is `cont` (it builds the stage's
    /// continuation in front of the next one's, consuming the stage's state).
    pub(crate) fn new<S, A, B>(
        stage: S,
        inlet: Inlet<A>,
        outlet: Outlet<B>,
        cont: fn(S, Cont<B>) -> Cont<A>,
    ) -> Fusable
    where
        S: Stage + 'static,
        A: Send + 'static,
        B: Send + 'static,
    {
        Fusable {
            inlet: inlet.id,
            outlet: outlet.id,
            op: Box::new(Linear { stage, cont }),
        }
    }
}

/// What stands at the index of a stage that was fused into the stage at the index of its
/// run's first operator: no ports, and finalised from the start (the build marks it so, with
/// no `post_stop`; the stage's state lives on in the fused stage and is dropped when that one
/// finalises).
#[derive(Debug)]
pub(crate) struct FusedAway;

impl Stage for FusedAway {
    fn ports(&self, _: &mut Ports) {}

    fn name(&self) -> &'static str {
        "fused into the stage of its run's first operator"
    }
}

/// Fuses the runs of fusable entries of a graph. `entries[i]` is stage `i`: a plain stage or a
/// [`Fusable`]; `succ(i)` is the stage owning the in-port of fusable `i`'s out-port, `pred(i)`
/// the one owning the out-port of its in-port. Returns the stages, index for index, and the
/// indices whose stage was fused into another one's (a [`FusedAway`] stands there).
pub(crate) fn fuse_runs(
    entries: Vec<Result<Box<dyn Stage>, Fusable>>,
    owner_of_in: impl Fn(u32) -> u32,
    owner_of_out: impl Fn(u32) -> u32,
) -> (Vec<Box<dyn Stage>>, Vec<usize>) {
    let n = entries.len();
    let ends: Vec<Option<(u32, u32)>> = entries
        .iter()
        .map(|e| e.as_ref().err().map(|f| (f.inlet, f.outlet)))
        .collect();
    let fusable = |i: u32| ends.get(i as usize).is_some_and(Option::is_some);
    // The next fusable stage downstream of fusable `i`, if any (not itself).
    let succ = |i: usize| -> Option<usize> {
        let (_, out) = ends[i]?;
        let j = owner_of_in(out);
        (j as usize != i && fusable(j)).then_some(j as usize)
    };
    let mut slots: Vec<Option<Result<Box<dyn Stage>, Fusable>>> =
        entries.into_iter().map(Some).collect();
    let mut out: Vec<Option<Box<dyn Stage>>> = (0..n).map(|_| None).collect();
    let mut absorbed = Vec::new();
    let mut emit = |run: &[usize], slots: &mut Vec<Option<Result<Box<dyn Stage>, Fusable>>>| {
        let mut ops: Vec<Fusable> = run
            .iter()
            .map(|&i| match slots[i].take() {
                Some(Err(f)) => f,
                _ => unreachable!("a run holds fusable stages, each once"),
            })
            .collect();
        if ops.len() == 1 {
            let f = ops.pop().expect("one");
            out[run[0]] = Some(f.op.into_stage());
            return;
        }
        let (inlet, outlet) = (ops[0].inlet, ops[ops.len() - 1].outlet);
        let make = ops[0].op.stage_maker();
        let mut chain = ops[ops.len() - 1].op.terminal(outlet);
        for f in ops.into_iter().rev() {
            chain = f.op.wrap(chain);
        }
        out[run[0]] = Some(make(inlet, outlet, chain));
        for &i in &run[1..] {
            out[i] = Some(Box::new(FusedAway));
            absorbed.push(i);
        }
    };
    for (head, end) in ends.iter().enumerate() {
        let Some((inlet, _)) = *end else {
            continue;
        };
        let before = owner_of_out(inlet);
        if before as usize != head && fusable(before) {
            continue; // not the first of its run
        }
        let mut run = vec![head];
        let mut at = head;
        while let Some(next) = succ(at) {
            if slots[next].is_none() {
                break; // a cycle back into a run already emitted
            }
            if run.len() == MAX_FUSED {
                emit(&run, &mut slots);
                run.clear();
            }
            run.push(next);
            at = next;
        }
        emit(&run, &mut slots);
    }
    // Whatever is left (fusable stages in a cycle of fusable stages) stays as it was.
    let stages = slots
        .into_iter()
        .zip(out)
        .map(|(slot, done)| match (slot, done) {
            (_, Some(stage)) => stage,
            (Some(Ok(stage)), None) => stage,
            (Some(Err(f)), None) => f.op.into_stage(),
            (None, None) => unreachable!("every stage is placed"),
        })
        .collect();
    (stages, absorbed)
}
