//! Islands: stages run by one interpreter, as a future on any executor (Pekko PR #2986).
//!
//! An **island** runs a graph of [`Stage`]s on one logical thread at a time, by direct calls:
//! no Reactive Streams protocol between its stages. The [`Interpreter`] schedules the stages
//! (Pekko's `GraphInterpreter`: port states as XOR-flipped bitfields, a typed slot per
//! connection, a power-of-two event ring, event chasing, finalisation gated by a counter of
//! pending finalisations); an [`Island`] wraps it as a `Future<Output = ()> + Send` that drains
//! its mailbox, runs for a budget of events, and parks or yields; a [`Runtime`] spawns islands
//! (futures' thread pool by default, or any executor such as tokio).
//!
//! This module is the engine. What users write is a [`Flow`](crate::flow::Flow) (module
//! [`crate::flow`]): a typed blueprint whose linear operators the compiler fuses into one stage
//! per run, materialised into islands of this module. Graphs that are not linear (fan-in,
//! fan-out) and stages with events of their own are wired here with a [`GraphBuilder`].
//!
//! # Contract of a stage's island
//!
//! * Handlers run on the island's thread, one at a time, serially with every other stage of
//!   the island; they never block and never synchronise with each other.
//! * Something outside posts to a stage through its [`Notifier`] (a request of a subscriber,
//!   an element of a foreign publisher); the stage's [`Stage::on_async_input`] then runs on the
//!   island. Posting never runs a handler on the poster's thread.
//! * A stage's panic fails that stage ([`IslandError::StagePanicked`]); the others go on with
//!   that signal.
//! * **Fairness:** an island yields after [`DEFAULT_BUDGET`] events (configurable), so one
//!   endless stream cannot starve the other islands of its worker.
//! * The island's run ends when it parks or yields; stages that asked ([`Ctx::call_on_park`])
//!   act there ([`Stage::on_park`]): a batching boundary's output side flushes then.
//!
//! # Layout
//!
//! | item | what |
//! |---|---|
//! | [`Stage`], [`Ctx`], [`Inlet`], [`Outlet`], [`Ports`] | the stage API  |
//! | [`GraphBuilder`], [`Interpreter`] | wiring stages into a graph; the interpreter  |
//! | [`stages`] | a collecting sink for tests and examples |
//! | [`Island`] | the interpreter as a future |
//! | [`Notifier`] | how the outside posts to a stage of a running island |
//! | [`RunEnd`], [`Stage::on_park`], [`Ctx::call_on_park`] | the hook where a stage acts when its island's run ends |
//! | [`Runtime`] | where islands run |
//!
//! # Examples
//!
//! ```
//! use rs_impl::flow::{ops::Map, IterSource, OperatorStage};
//! use rs_impl::island::{stages::CollectSink, GraphBuilder, Island};
//!
//! let mut g = GraphBuilder::new();
//! let (src, map_in) = g.connection::<u32>();
//! let (map_out, sink_in) = g.connection::<u32>();
//! let (sink, seen) = CollectSink::new(sink_in);
//! g.add_stage(IterSource::new(src, 1..=3u32));
//! g.add_stage(OperatorStage::new(map_in, map_out, Map::new(|x: u32| x + 1)));
//! g.add_stage(sink);
//! futures::executor::block_on(Island::new(g.build().unwrap()));
//! assert_eq!(seen.take().unwrap().unwrap(), vec![2, 3, 4]);
//! ```

mod future;
mod interpreter;
mod mailbox;
mod port;
mod runtime;
mod stage;
pub mod stages;

pub(crate) use future::SpawnOn;
pub use future::{Island, IslandStats, DEFAULT_BUDGET};
pub(crate) use interpreter::panic_error;
pub use interpreter::Ctx;
pub use interpreter::{BuildError, GraphBuilder, Interpreter, Stats};
pub use mailbox::Notifier;
pub use port::{Inlet, Outlet, PortId, Ports, RunEnd};
pub use runtime::{Runtime, RuntimeError};
pub use stage::Stage;

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
