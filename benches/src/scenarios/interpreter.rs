//! Scenario `interpreter`: seed 002's `InterpreterBenchmark` — `n` elements through k
//! identity stages, the sink pulling one element at a time, all on the calling thread.
//!
//! Parameter k: the number of identity stages (1, 5, 10). One element is one op, including
//! its pull round-trip through every stage; graph assembly is inside the measured time
//! (amortised over `n`, as in Pekko's benchmark). ns per added hop is
//! `(ns/element at k = 10 − ns/element at k = 1) / 9`.
//!
//! | implementation | what |
//! |---|---|
//! | `interpreter` | ours: `IterSource → k × Identity → sink` on a `GraphBuilder` as built by default (the k identity stages, built-in linear stages, fused into one stage: a direct call per hop), one `execute(u64::MAX)`, gate on |
//! | `interpreter-no-gate` | the same with the pending-finalisation gate off (every event checks its stage, as before Pekko #2986) |
//! | `interpreter-unfused` | the same graph with `set_fusion(false)`: every identity its own interpreter stage, a pull and a push event per hop (Pekko's shape), gate on |
//! | `interpreter-unfused-no-gate` | unfused, gate off: where the gate's effect shows per hop |
//! | `flow-fused` | ours through the builder: `Flow::from_iter(0..n)` + k × `identity()`, which the builder fuses into one stage (a direct call per hop), into a `for_each` subscriber (unbounded demand), the island polled by `block_on` |
//! | `rs-pairs` | the same chain as separate publisher/subscriber pairs (what a stage cost before islands): `range(0..n)` → k × `IdentityProcessor(16)` → `for_each(OneByOne)` |
//! | `futures-map` | peer: `futures::stream::iter(0..n)` + k × `.map(identity)`, statically chained, `block_on(for_each)` |

use std::sync::Arc;

use futures::StreamExt;
use rs_api::{Publisher, PublisherExt};
use rs_impl::island::stages::{Identity, IterSource};
use rs_impl::island::{Ctx, Flow, GraphBuilder, Inlet, PortId, Ports, Stage};
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

fn interpreter_run(k: u64, n: u64, gate: bool, fusion: bool) -> u64 {
    let sum = Arc::new(Checksum::default());
    let mut g = GraphBuilder::new();
    g.set_fusion(fusion);
    let (o, mut i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..n));
    for _ in 0..k {
        let (o, next) = g.connection::<u64>();
        g.add_stage(Identity::new(i, o));
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

/// Ours: the interpreter as built by default (fusion on, the pending-finalisation gate on).
pub fn interpreter(k: u64, n: u64) -> u64 {
    interpreter_run(k, n, true, true)
}

/// Ours, gate off: every event runs the finalisation check for its stage.
pub fn interpreter_no_gate(k: u64, n: u64) -> u64 {
    interpreter_run(k, n, false, true)
}

/// Ours, fusion off: every identity its own interpreter stage; gate on.
pub fn interpreter_unfused(k: u64, n: u64) -> u64 {
    interpreter_run(k, n, true, false)
}

/// Ours, fusion off and gate off.
pub fn interpreter_unfused_no_gate(k: u64, n: u64) -> u64 {
    interpreter_run(k, n, false, false)
}

/// Ours through the builder, one island polled on this thread.
pub fn flow_fused(k: u64, n: u64) -> u64 {
    let sum = Arc::new(Checksum::default());
    let acc = sum.clone();
    let mut flow = Flow::from_iter(0..n).with_budget(u64::MAX);
    for _ in 0..k {
        flow = flow.identity();
    }
    let (s, done) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
    let Ok(island) = flow.into_island(Box::new(s)) else {
        panic!("the flow builds")
    };
    futures::executor::block_on(island);
    done.wait().expect("completes");
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
        title: "seed 002's InterpreterBenchmark: k identity stages, the sink pulling one at a time",
        param_name: "identity stages",
        params: [1, 5, 10].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "interpreter",
                ours: true,
                per_param: true,
                what: "IterSource → k × Identity → sink pulling one at a time, one execute(); GraphBuilder defaults: the identities fused into one stage, finalisation gate on",
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
                name: "interpreter-unfused",
                ours: true,
                per_param: true,
                what: "the same graph with set_fusion(false): each identity its own stage, a pull and a push event per hop (Pekko's shape); gate on",
                run: interpreter_unfused,
                lossy: false,
            },
            Implementation {
                name: "interpreter-unfused-no-gate",
                ours: true,
                per_param: true,
                what: "unfused, gate off",
                run: interpreter_unfused_no_gate,
                lossy: false,
            },
            Implementation {
                name: "flow-fused",
                ours: true,
                per_param: true,
                what: "Flow::from_iter + k × identity() (fused: one stage, a direct call per hop) into for_each (unbounded), the island polled by block_on",
                run: flow_fused,
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
    }
}
