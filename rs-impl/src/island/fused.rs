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
use super::stage::{Ctx, Inlet, PortId, Ports, Stage};

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
    Op::new(move |mut next: Cont<B>| {
        let f = f.clone();
        Box::new(move |ctx: &mut Ctx<'_>, x: A| next(ctx, f(x))) as Cont<A>
    })
}

/// `identity()`.
pub(crate) fn identity<A: Send + 'static>() -> Op {
    Op::new(|mut next: Cont<A>| Box::new(move |ctx: &mut Ctx<'_>, x: A| next(ctx, x)) as Cont<A>)
}

/// `filter(p)`.
pub(crate) fn filter<A, F>(p: StdArc<F>) -> Op
where
    A: Send + 'static,
    F: Fn(&A) -> bool + Send + Sync + 'static,
{
    Op::new(move |mut next: Cont<A>| {
        let p = p.clone();
        Box::new(
            move |ctx: &mut Ctx<'_>, x: A| {
                if p(&x) {
                    next(ctx, x)
                } else {
                    Sent::Dropped
                }
            },
        ) as Cont<A>
    })
}

/// `take(n)` for `n > 0` (`take(0)` is a stage of its own: it completes at start).
pub(crate) fn take<A: Send + 'static>(n: u64) -> Op {
    debug_assert!(n > 0);
    Op::new(move |mut next: Cont<A>| {
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
        }) as Cont<A>
    })
}

/// `skip(n)`.
pub(crate) fn skip<A: Send + 'static>(n: u64) -> Op {
    Op::new(move |mut next: Cont<A>| {
        let mut left = n;
        Box::new(move |ctx: &mut Ctx<'_>, x: A| {
            if left > 0 {
                left -= 1;
                Sent::Dropped
            } else {
                next(ctx, x)
            }
        }) as Cont<A>
    })
}

/// `scan(seed, f)`.
pub(crate) fn scan<A, S, F>(seed: S, f: StdArc<F>) -> Op
where
    A: Send + 'static,
    S: Clone + Send + Sync + 'static,
    F: Fn(&S, A) -> S + Send + Sync + 'static,
{
    Op::new(move |mut next: Cont<S>| {
        let f = f.clone();
        let mut acc = seed.clone();
        Box::new(move |ctx: &mut Ctx<'_>, x: A| {
            acc = f(&acc, x);
            next(ctx, acc.clone())
        }) as Cont<A>
    })
}
