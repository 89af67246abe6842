//! Islands: stages fused into one interpreter, run as a future on any executor (seed 002).
//!
//! An **island** runs a graph of [`Stage`]s on one logical thread at a time, by direct calls:
//! a `map → filter → take` chain costs a function call per hop, not the Reactive Streams
//! protocol per hop. The [`Interpreter`] schedules the stages (Pekko's `GraphInterpreter`:
//! port states as XOR-flipped bitfields, a typed slot per connection, a power-of-two event
//! ring, event chasing, finalisation gated by a counter of pending finalisations); an
//! [`Island`] wraps it as a `Future<Output = ()> + Send` that drains its mailbox, runs for a
//! budget of events, and parks or yields; a [`Runtime`] spawns islands (futures' thread pool by
//! default, or any executor such as tokio); [`Flow`] is the builder users write.
//!
//! # Contract (for a subscriber of [`Flow::into_publisher`])
//!
//! * **What a subscriber sees:** `on_subscribe` before `subscribe` returns (on the caller's
//!   thread), then at most as many `on_next` as it requested, then one terminal signal — these
//!   on the island's thread (a worker of the runtime), serially.
//! * **Who may call `request`/`cancel`, from which thread:** anyone, from any thread, also
//!   re-entrantly from `on_next`. Both only record (an atomic add, a flag) and post to the
//!   island's mailbox, and return at once (rule 3.4): no element is ever delivered inside the
//!   caller's `request`, so an unbounded request on an endless source does not capture the
//!   caller, and recursion (3.3) cannot happen.
//! * **When slow:** the island pulls from upstream only what downstream demand allows. Memory
//!   is bounded by one element per connection plus the input buffer (16 by default).
//! * **On cancel:** the upstream subscription is cancelled, every stage is finalised
//!   (`post_stop`, then its state is dropped), elements in flight are dropped, and the
//!   subscriber is dropped (3.13).
//! * **On termination:** completion after every element; an upstream error at once (overtaking
//!   buffered input); a stage's panic fails the stream with [`IslandError::StagePanicked`].
//! * **A late subscriber** gets its own island: its own run of the whole stream (cold).
//! * **A panicking subscriber** is cancelled and its panic reported ([`crate::panics`]); it
//!   shares nothing with other subscriptions, which run on their own islands.
//! * **Fairness:** an island yields after [`DEFAULT_BUDGET`] events (configurable), so one
//!   endless stream cannot starve the other islands of its worker.
//!
//! # Layout
//!
//! | item | what |
//! |---|---|
//! | [`Stage`], [`Ctx`], [`Inlet`], [`Outlet`], [`Ports`] | the stage API (module [`stage`]) |
//! | [`stages`] | built-in stages: identity, map, filter, take, skip, scan, fold, iterator source, collecting sink |
//! | [`GraphBuilder`], [`Interpreter`] | wiring stages into a graph; the interpreter (module [`interpreter`]) |
//! | [`Island`] | the interpreter as a future |
//! | [`Notifier`] | how the outside posts to a stage of a running island |
//! | [`PublisherSource`], [`SubscriberSink`] | the edges: Reactive Streams in and out (the input side is a [`BoundarySubscriber`](crate::boundary::BoundarySubscriber)) |
//! | [`RunEnd`], [`Stage::on_park`], [`Ctx::call_on_park`] | the hook where a stage acts when its island's run ends (the batching boundary flushes there) |
//! | [`Runtime`] | where islands run |
//! | [`Flow`], [`FlowPublisher`] | the builder |
//! | [`IslandProcessor`] | a flow as a `Processor`: its subscriber half is the island's input side (unicast) |
//!
//! # Islands joined by boundaries (#13)
//!
//! [`Flow::async_boundary`] cuts a flow into islands joined by batching boundaries
//! ([`crate::boundary`]). The island's poll loop has one place where a run ends — it parks, or
//! yields after its budget — and there it runs the [`Stage::on_park`] hook of the stages that
//! asked for it ([`Ctx::call_on_park`]): a boundary's output side flushes its batch there, and
//! an input side acts on an upstream error it held back while elements were still
//! deliverable. Events a hook causes run before the island parks.
//!
//! Linear operators next to a boundary are fused with it: the fused segment before a boundary
//! writes into the boundary's ring, and the one after it reads from it, a batch per handler
//! call with no interpreter event per element (a source iterator right before a boundary is
//! fused in too, and so is the subscriber right after one). Stages added with
//! [`Flow::via`] and `fold` stay stages of their own, joined to the segments by ports.
//!
//! # Fusion
//!
//! A hop between two interpreter stages is two events (a pull up, a push down), each a
//! dependent chain of loads and an indirect call: about 13 ns per hop on the 2-core benchmark
//! machine (Pekko's interpreter: about 15). The built-in linear operators (identity, map,
//! filter, take, skip, scan) therefore run **fused**: a run of them, written one after another
//! on a [`Flow`] or wired one after another on a [`GraphBuilder`] (whose
//! [`set_fusion`](GraphBuilder::set_fusion) is on by default), becomes one interpreter stage
//! whose per-element work is a chain of direct calls, one per operator (about 2 ns per hop).
//! At its two ports the fused stage does what the run did; stages of your own
//! ([`Stage`] implementations) are never fused and pay the interpreter's events.
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::island::{Flow, Runtime};
//! use rs_impl::{source, subscriber::{collect, RequestStrategy}};
//!
//! let runtime = Runtime::new().unwrap();
//! let p = Flow::from_publisher(source::range(1u64..1_001))
//!     .map(|x| x * 3)
//!     .filter(|x| x % 2 == 0)
//!     .take(10)
//!     .into_publisher(&runtime);
//! let (s, h) = collect(RequestStrategy::Prefetch(4));
//! p.subscribe(Box::new(s));
//! assert_eq!(h.wait().unwrap(), vec![6, 12, 18, 24, 30, 36, 42, 48, 54, 60]);
//! ```
//!
//! Running islands on tokio: build a [`Runtime`] from a spawner,
//! `Runtime::from_spawner(move |island| { handle.spawn(island); })`, or spawn
//! [`Flow::into_island`]'s future yourself (`rs-impl/tests/island_tokio.rs` does both).

pub mod edge;
mod flow;
pub(crate) mod fused;
mod future;
pub mod interpreter;
mod mailbox;
mod runtime;
pub(crate) mod segment;
pub mod stage;
pub mod stages;

pub use edge::{PublisherSource, SharedPublisher, SubscriberSink};
pub use flow::{Flow, FlowPublisher, IslandProcessor, NotBuilt, DEFAULT_INPUT_BUFFER};
pub use fused::MAX_FUSED;
pub use future::{Island, IslandStats, Yielder, DEFAULT_BUDGET};
pub use interpreter::{BuildError, GraphBuilder, Interpreter, Stats};
pub use mailbox::Notifier;
pub use runtime::{Runtime, RuntimeError};
pub use stage::{Ctx, Fusable, Inlet, Outlet, PortId, Ports, RunEnd, Stage};

/// What fails a stream inside an island.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IslandError {
    /// A stage's handler panicked; the stage failed with this error.
    #[error("stage {stage} panicked: {message}")]
    StagePanicked {
        /// The stage's name (its type, by default).
        stage: &'static str,
        /// The panic message, when it was a string.
        message: String,
    },
    /// A stage used a port against the rules (push twice or before a pull, pull twice, grab
    /// from an empty port, a port of another element type).
    #[error("port {port}: {op} not allowed: {reason}")]
    PortMisuse {
        /// The operation (`push`, `pull`, `grab`).
        op: &'static str,
        /// The connection index.
        port: u32,
        /// Why it is not allowed.
        reason: &'static str,
    },
    /// The upstream sent more elements than the island requested (it broke rule 1.1).
    #[error("input buffer overrun: the upstream sent more than the {capacity} elements requested (rule 1.1)")]
    InputOverrun {
        /// The input buffer's size.
        capacity: usize,
    },
    /// The island upstream of a boundary stopped without a terminal signal (it was dropped
    /// unfinished, for example with its runtime).
    #[error("the upstream island stopped without completing (it was dropped unfinished)")]
    Abandoned,
}
