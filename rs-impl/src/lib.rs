//! # Reactive Streams for Rust: building blocks and implementations
//!
//! Built on the [`rs_api`] contract. Each module states its contract first.
//!
//! | module | what it gives you |
//! |---|---|
//! | [`loom`] | the synchronisation facade: std types normally, loom's under `--cfg rs_loom` |
//! | [`demand`] | a saturating demand counter that turns `request(0)` into the 3.9 error |
//! | [`serial`] | the work-in-progress drain loop: serial signals, bounded recursion, no lost wake-up |
//! | [`source`] | cold publishers (iterator, range, `Pull` sources, empty, failed, never) and the bounded `push` source |
//! | [`flow`] | the typed `Flow` builder: linear operators written once ([`flow::Operator`]) and fused by the compiler, materialised into islands; a flow as a publisher or a processor |
//! | [`island`] | stages run by an interpreter (ports, event ring, chasing, completion-gated finalisation), as futures on any executor ([`Runtime`]); graphs wired by hand |
//! | `handoff` (private) | the one single-producer single-consumer hand-off under the boundary, the stream bridges and the external subscriber |
//! | [`boundary`] | batching async boundaries between islands; the boundary subscriber (an island's input side) |
//! | producer API | the one producer API of the fanout channel and the push source: `try_send`, `send(..).await`, `blocking_send`, `complete`, `fail`, a `Sink`; their errors |
//! | [`processor`] | a multicast identity processor with a bounded buffer |
//! | [`merge`] | `merge`, `flat_map`, `concat_map`, `observe_on` for plain publishers (and the same operators on a `Flow`), no pooling |
//! | [`lanes`] | keyed lanes: one stream processed by `n` lanes in parallel (each its own island), each key's order kept, bounded per-lane queues, merged back or one subscriber per lane |
//! | [`fanout`] | one stream to many subscribers at their own pace: a processor and a channel with a producer handle |
//! | [`subscriber`] | ready-made subscribers: collect, for-each, with a request strategy |
//! | [`compat`] | async Rust: publishers as `Stream`s and blocking iterators, `Stream`s as publishers, `Sink`s and async callbacks as subscribers; bounded and demand-driven both ways |
//! | `rsocket` (feature `rsocket`) | Reactive Streams across processes: RSocket 1.0 over TCP on tokio, a client whose streams are publishers and a server that serves publishers by route |
//! | [`panics`] | subscriber panics (rule 2.13): the guard for a subscriber call ([`panics::guard`]), where panics are reported, the text of a panic |
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::{source, subscriber};
//!
//! let (s, result) = subscriber::collect(subscriber::RequestStrategy::Prefetch(16));
//! source::range(0u64..1000).subscribe(Box::new(s));
//! assert_eq!(result.wait().unwrap().len(), 1000);
//! ```

pub mod boundary;
pub mod compat;
pub mod demand;
pub mod fanout;
pub mod flow;
mod handoff;
pub mod island;
pub mod lanes;
pub mod loom;
pub mod merge;
pub mod panics;
pub mod processor;
mod producer;
#[cfg(feature = "rsocket")]
pub mod rsocket;
pub mod serial;
pub mod source;
pub mod subscriber;

pub use flow::{BoxFlow, Flow, FlowPublisher};
pub use island::Runtime;
pub use producer::{CloseReason, ProducerError, SendError, SinkError, TrySendError};
