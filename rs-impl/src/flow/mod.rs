//! Flows: typed blueprints of linear streams, materialised into islands.
//!
//! A [`Flow`] is built like an iterator chain — a source, then operators — and run by
//! materialising it: [`Flow::into_publisher`] gives a [`Publisher`](rs_api::Publisher) whose
//! every subscription runs the whole blueprint afresh on islands of a
//! [`Runtime`](crate::island::Runtime) (one island per segment between
//! [async boundaries](Flow::async_boundary)).
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
//!   is bounded by one element per connection, what operators hold back, plus the input
//!   buffer ([`DEFAULT_INPUT_BUFFER`] by default).
//! * **On cancel:** the upstream subscription is cancelled, every stage is finalised, elements
//!   in flight are dropped, and the subscriber is dropped (3.13).
//! * **On termination:** completion after every element; an upstream error at once (overtaking
//!   buffered input); an operator's or stage's panic fails the stream with
//!   [`IslandError::StagePanicked`](crate::island::IslandError::StagePanicked).
//! * **A late subscriber** gets its own run of the whole stream (cold).
//! * **A panicking subscriber** is cancelled and its panic reported ([`crate::panics`]); it
//!   shares nothing with other subscriptions, which run on their own islands.
//!
//! # Operators, written once
//!
//! A linear operator — element in, zero or more out — is an [`Operator`]. The built-in ones
//! ([`ops`]) and yours are the same kind of thing: [`Flow::apply`] appends any operator, and
//! `map`, `filter`, `take`, `skip`, `scan`, `fold` and `identity` are `apply` with a built-in
//! one. A flow's type spells its operators (`Flow<Apply<Apply<FromIter<I>, Map<F>>, Filter<P>>>`,
//! like iterator adapters), so the compiler fuses every run of them into one loop of inlined
//! calls between the island's edges: an added hop costs what its own code costs. The same
//! operator runs as an interpreter stage of its own with [`OperatorStage`], for graphs wired
//! by hand.
//!
//! **Fan-in and hand-off operators** — [`Flow::flat_map`], [`Flow::concat_map`],
//! [`Flow::merge`] (inner streams merged on the island's fan-in stage) and [`Flow::observe_on`]
//! (the rest of the flow on another runtime) — are defined with the plain-publisher merges in
//! [`crate::merge`], whose module docs give their contract.
//!
//! # Layout
//!
//! | item | what |
//! |---|---|
//! | [`Flow`], [`BoxFlow`], [`Shape`] | the builder, its erased form, the blueprint's type |
//! | [`Operator`], [`Emit`], [`Signal`] | the linear operator trait (module docs of [`Operator`]) |
//! | [`ops`] | the built-in operators |
//! | [`FlowPublisher`], [`IslandProcessor`], [`NotBuilt`] | a flow as a publisher, as a processor; a failed materialisation |
//! | [`OperatorStage`], [`IterSource`], [`StreamSource`], [`PublisherSource`], [`SubscriberSink`] | the flow's parts as interpreter stages, for a [`GraphBuilder`](crate::island::GraphBuilder) |
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::flow::Flow;
//! use rs_impl::island::Runtime;
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

mod blueprint;
mod builder;
mod edge;
mod entry;
mod exit;
mod operator;
pub mod ops;
mod plan;
mod processor;
mod publisher;
mod ring_in;
mod ring_out;
mod segment;
mod shape;
mod stages;
mod stream;

pub use builder::{BoxFlow, Flow, DEFAULT_INPUT_BUFFER};
// For the merge operators (`crate::merge`), which add shapes and stages of their own.
pub(crate) use edge::RingExit;
// For keyed lanes (`crate::lanes`), which end each lane in a subscriber of its own.
pub(crate) use blueprint::start_and_spawn;
pub(crate) use edge::SubscriberExit;
pub(crate) use entry::{Entry, Pumped, RingEntry, Stall};
pub(crate) use exit::{Closing, Exit, PortExit, Step};
pub use operator::{Emit, Operator, Signal};
pub use processor::IslandProcessor;
pub(crate) use publisher::refuse;
pub use publisher::{FlowPublisher, NotBuilt};
pub(crate) use ring_in::RingIn;
pub use ring_in::SharedPublisher;
pub(crate) use ring_out::RingOut;
pub(crate) use shape::Build;
pub use shape::{
    Apply, Boundary, Boxed, FromBoundary, FromIter, FromPublisher, FromStream, Shape, Via,
};
pub use stages::{IterSource, OperatorStage, PublisherSource, SubscriberSink};
pub use stream::{BoxStream, StreamSource};
