//! Scenario `interpreter`: Pekko PR #2986's `InterpreterBenchmark` — `n` elements through k
//! identity stages, the sink pulling one element at a time, all on the calling thread.
//!
//! Parameter k: the number of identity stages (1, 5, 10). One element is one op, including
//! its pull round-trip through every stage; graph assembly is inside the measured time
//! (amortised over `n`, as in Pekko's benchmark). ns per added hop is
//! `(ns/element at k = 10 − ns/element at k = 1) / 9`.
//!
//! | implementation | what |
//! |---|---|
//! | `interpreter` | ours: `IterSource → k × OperatorStage(Identity) → sink` on a `GraphBuilder`: every identity its own interpreter stage, a pull and a push event per hop (Pekko's shape), one `execute(u64::MAX)`, gate on |
//! | `interpreter-no-gate` | the same with the pending-finalisation gate off (every event checks its stage, as before Pekko #2986) |
//! | `flow-fused` | ours through the builder: `Flow::from_iter(0..n)` + k × `identity()`, a static chain the compiler fuses into the one stage of the island, into a `for_each` subscriber (unbounded demand), the island polled by `block_on` |
//! | `flow-user-op` | the same with k × a linear operator written outside the crate (`apply(PassThrough)`, an `Operator` like a user writes): it fuses like a built-in one |
//! | `rs-pairs` | the same chain as separate publisher/subscriber pairs (what a stage cost before islands): `range(0..n)` → k × `IdentityProcessor(16)` → `for_each(OneByOne)` |
//! | `futures-map` | peer: `futures::stream::iter(0..n)` + k × `.map(identity)`, statically chained, `block_on(for_each)` |

use std::sync::Arc;

use futures::StreamExt;
use rs_api::{Publisher, PublisherExt};
use rs_impl::flow::ops::Identity;
use rs_impl::flow::{Emit, Flow, IterSource, Operator, OperatorStage, Shape, Signal};
use rs_impl::island::{Ctx, GraphBuilder, Inlet, PortId, Ports, Stage};
use rs_impl::processor::IdentityProcessor;
use rs_impl::source::range;
use rs_impl::subscriber::{for_each, RequestStrategy};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario};

/// The benchmark's sink: pulls one element at a time and adds it to the checksum.
struct SumSink {
    inlet: Inlet<u64>,
    sum: Arc<Checksum>,
}

impl Stage for SumSink {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.pull(self.inlet);
    }
    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        self.sum.add(x);
        ctx.pull(self.inlet);
    }
}

fn interpreter_run(k: u64, n: u64, gate: bool) -> u64 {
    let sum = Arc::new(Checksum::default());
    let mut g = GraphBuilder::new();
    let (o, mut i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..n));
    for _ in 0..k {
        let (o, next) = g.connection::<u64>();
        g.add_stage(OperatorStage::new(i, o, Identity::new()));
        i = next;
    }
    g.add_stage(SumSink {
        inlet: i,
        sum: sum.clone(),
    });
    let mut interpreter = g.build().expect("a linear chain");
    interpreter.set_finalisation_gate(gate);
    interpreter.execute(u64::MAX);
    assert!(interpreter.is_completed());
    sum.get()
}

/// Ours: one interpreter stage per hop, the pending-finalisation gate on.
pub fn interpreter(k: u64, n: u64) -> u64 {
    interpreter_run(k, n, true)
}

/// Ours, gate off: every event runs the finalisation check for its stage.
pub fn interpreter_no_gate(k: u64, n: u64) -> u64 {
    interpreter_run(k, n, false)
}

/// A linear operator written as a user writes one (outside the crate): passes every element
/// through.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassThrough;

impl Operator<u64> for PassThrough {
    type Out = u64;
    #[inline]
    fn on_next<E: Emit<u64> + ?Sized>(&mut self, x: u64, out: &mut E) -> Signal {
        out.emit(x)
    }
}

macro_rules! hops {
    ($f:expr, $hop:ident; 1) => { $hop!($f) };
    ($f:expr, $hop:ident; 5) => { $hop!($hop!($hop!($hop!($hop!($f))))) };
    ($f:expr, $hop:ident; 10) => { hops!(hops!($f, $hop; 5), $hop; 5) };
}
macro_rules! identity_hop {
    ($f:expr) => {
        $f.identity()
    };
}
macro_rules! user_hop {
    ($f:expr) => {
        $f.apply(PassThrough)
    };
}

/// Runs `flow` on one island polled on this thread into a summing `for_each`.
fn run_flow<S: Shape<Out = u64>>(flow: Flow<S>, sum: &Arc<Checksum>) {
    let acc = sum.clone();
    let (s, done) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
    let Ok(island) = flow.into_island(Box::new(s)) else {
        panic!("the flow builds")
    };
    futures::executor::block_on(island);
    done.wait().expect("completes");
}

/// Ours through the builder, one island polled on this thread: a static chain of k
/// `identity()` hops for k = 1, 5, 10 (boxed per hop otherwise).
pub fn flow_fused(k: u64, n: u64) -> u64 {
    let sum = Arc::new(Checksum::default());
    let f = Flow::from_iter(0..n).with_budget(u64::MAX);
    match k {
        1 => run_flow(hops!(f, identity_hop; 1), &sum),
        5 => run_flow(hops!(f, identity_hop; 5), &sum),
        10 => run_flow(hops!(f, identity_hop; 10), &sum),
        _ => {
            let mut b = f.boxed();
            for _ in 0..k {
                b = b.identity().boxed();
            }
            run_flow(b, &sum);
        }
    }
    sum.get()
}

/// The same with a user-written operator per hop.
pub fn flow_user_op(k: u64, n: u64) -> u64 {
    let sum = Arc::new(Checksum::default());
    let f = Flow::from_iter(0..n).with_budget(u64::MAX);
    match k {
        1 => run_flow(hops!(f, user_hop; 1), &sum),
        5 => run_flow(hops!(f, user_hop; 5), &sum),
        10 => run_flow(hops!(f, user_hop; 10), &sum),
        _ => {
            let mut b = f.boxed();
            for _ in 0..k {
                b = b.apply(PassThrough).boxed();
            }
            run_flow(b, &sum);
        }
    }
    sum.get()
}

/// The chain as separate publisher/subscriber pairs.
pub fn rs_pairs(k: u64, n: u64) -> u64 {
    let sum = Arc::new(Checksum::default());
    let acc = sum.clone();
    let processors: Vec<IdentityProcessor<u64>> =
        (0..k).map(|_| IdentityProcessor::new(16)).collect();
    let (s, done) = for_each(RequestStrategy::OneByOne, move |x: u64| acc.add(x));
    processors.last().expect("k >= 1").subscribe(Box::new(s));
    for w in processors.windows(2) {
        w[0].subscribe(Box::new(w[1].clone()));
    }
    range(0..n).subscribe_with(processors[0].clone());
    done.wait().expect("completes");
    sum.get()
}

macro_rules! maps {
    ($s:expr; 1) => { $s.map(std::convert::identity) };
    ($s:expr; 5) => { maps!(maps!($s; 1).map(std::convert::identity).map(std::convert::identity).map(std::convert::identity); 1) };
    ($s:expr; 10) => { maps!(maps!($s; 5); 5) };
}

/// Peer: a `futures::stream` combinator chain, one `map` per hop (static for k = 1, 5, 10;
/// boxed per hop otherwise).
pub fn futures_map(k: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    let add = |x: u64| {
        sum.add(x);
        futures::future::ready(())
    };
    let s = futures::stream::iter(0..n);
    match k {
        1 => futures::executor::block_on(maps!(s; 1).for_each(add)),
        5 => futures::executor::block_on(maps!(s; 5).for_each(add)),
        10 => futures::executor::block_on(maps!(s; 10).for_each(add)),
        _ => {
            let mut b = s.boxed();
            for _ in 0..k {
                b = b.map(std::convert::identity).boxed();
            }
            futures::executor::block_on(b.for_each(add));
        }
    }
    sum.get()
}

/// The scenario's registry entry.
///
/// # Examples
///
/// ```
/// let s = rs_benches::scenarios::interpreter::scenario();
/// assert_eq!((s.implementations[0].run)(5, 100), (s.expected)(5, 100));
/// ```
#[must_use]
pub fn scenario() -> Scenario {
    Scenario {
        id: "interpreter",
        title: "Pekko PR #2986's InterpreterBenchmark: k identity stages, the sink pulling one at a time",
        param_name: "identity stages",
        params: [1, 5, 10].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "interpreter",
                ours: true,
                per_param: true,
                what: "IterSource → k × OperatorStage(Identity) → sink pulling one at a time, one execute(): each identity its own stage, a pull and a push event per hop (Pekko's shape); gate on",
                run: interpreter,
                lossy: false,
            },
            Implementation {
                name: "interpreter-no-gate",
                ours: true,
                per_param: true,
                what: "the same, gate off: the finalisation check after every event (before Pekko #2986)",
                run: interpreter_no_gate,
                lossy: false,
            },
            Implementation {
                name: "flow-fused",
                ours: true,
                per_param: true,
                what: "Flow::from_iter + k × identity(), a static chain fused by the compiler into the island's one stage, into for_each (unbounded), the island polled by block_on",
                run: flow_fused,
                lossy: false,
            },
            Implementation {
                name: "flow-user-op",
                ours: true,
                per_param: true,
                what: "the same with k × apply(PassThrough), a linear operator written outside the crate: fused like a built-in one",
                run: flow_user_op,
                lossy: false,
            },
            Implementation {
                name: "rs-pairs",
                ours: false,
                per_param: true,
                what: "k separate publisher/subscriber pairs: range → k × IdentityProcessor(16) → for_each(OneByOne)",
                run: rs_pairs,
                lossy: false,
            },
            Implementation {
                name: "futures-map",
                ours: false,
                per_param: true,
                what: "futures::stream::iter + k × map(identity), static chain, block_on(for_each)",
                run: futures_map,
                lossy: false,
            },
        ],
        expected: sum_below,
        cross_thread: false,
        deliveries: None,
        ops: None,
    }
}
