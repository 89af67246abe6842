//! # The Reactive Streams verification kit (TCK) for Rust
//!
//! Proves a `Publisher`, a `Subscriber` or a `Processor` interoperable: the JVM
//! TCK's tests, under the JVM's names in snake case, plus real checks for rules the JVM leaves
//! untested wherever Rust makes them observable.
//!
//! ## The shape: one factory per verification
//!
//! As in the JVM TCK, each verification is a trait whose one required factory builds the thing
//! under test; the other hooks have the JVM's defaults. The factories return `impl` the
//! `rs_api` trait: your own type, or a boxed one ([`rs_api::BoxPublisher`],
//! [`rs_api::BoxSubscriber`]).
//!
//! | to verify | implement | factory | run with |
//! |---|---|---|---|
//! | a `Publisher` | [`publisher::PublisherVerification`] | `create_publisher(n) -> impl Publisher<T>` | [`publisher::verify`]; loom: [`loom::verify_publisher`] |
//! | a `Subscriber` (whitebox) | [`subscriber::SubscriberWhiteboxVerification`] | `create_subscriber(probe) -> impl Subscriber<T>` | [`subscriber::whitebox::verify`] |
//! | a `Subscriber` (blackbox) | [`subscriber::SubscriberBlackboxVerification`] | `create_subscriber() -> impl Subscriber<T>` | [`subscriber::blackbox::verify`]; loom: [`loom::verify_subscriber`] |
//! | a `Processor` | [`processor::IdentityProcessorVerification`] | `create_identity_processor(buffer) -> impl Processor<T, T> + Clone` | [`processor::verify`]; loom: [`loom::verify_processor`] |
//! | a Publisher → `Stream` bridge | [`stream::StreamBridgeVerification`] | `create_stream(publisher) -> impl Stream<Item = Result<T, Error>>` | [`stream::verify`] |
//! | a Sink-as-subscriber adapter | [`adapters::SinkSubscriberVerification`] | `create_subscriber(sink: TestSink<T>) -> impl Subscriber<T>` | [`adapters::verify_sink`] |
//! | an async-callback subscriber | [`adapters::AsyncCallbackVerification`] | `create_subscriber(callback: TestCallback<T>) -> impl Subscriber<T>` | [`adapters::verify_async`] |
//!
//! Each `verify` returns a [`suite::Suite`] (one test per rule); [`tck_main!`] runs suites as
//! `cargo test` tests, [`runner::main`] as a runner binary with a table and a JSON report. The
//! loom functions take the same verification value as the ordinary ones: write the factory
//! once.
//!
//! ## Use it in your crate's `cargo test`
//!
//! Add `rs-tck` as a dev-dependency and a test target with `harness = false`:
//!
//! ```toml
//! [[test]]
//! name = "tck"
//! harness = false
//! ```
//!
//! ```no_run
//! // tests/tck.rs
//! use rs_api::Publisher;
//! use rs_tck::publisher::PublisherVerification;
//!
//! struct MyPublisherVerification;
//! impl PublisherVerification for MyPublisherVerification {
//!     type Item = u64;
//!     fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
//!         rs_impl::source::range(0..elements)
//!     }
//! }
//!
//! rs_tck::tck_main!(rs_tck::publisher::verify("my-publisher", MyPublisherVerification));
//! ```
//!
//! Every test then shows up as `my-publisher::publisher::required_spec101_…`: `ok`, `FAILED` with the
//! message, or `ignored` with the reason (skipped or untested; never shown as a pass).
//!
//! ## Run it over the built-ins
//!
//! `cargo run --release -p rs-tck [-- --full] [--json report.json] [FILTER]` runs every
//! verification over every implementation of this workspace (its registry lives in the binary,
//! `tck/src/bin/rs-tck/registry/`) and prints, on a terminal, a one-screen summary (a line per
//! implementation: passed, failed, skipped, decided by the types, untested, and its first
//! failure) or, with `--full` (the default when the output is not a terminal), a table of every
//! test with its rule, outcome and reason; last, in both, `N passed, N failed, N skipped`
//! (untested and decided-by-the-types counted as skipped). It exits 1 if anything failed.
//!
//! ## Loom
//!
//! The loom mode ([`loom`](mod@loom)) runs under `RUSTFLAGS="--cfg rs_loom"`; declare that cfg
//! in your crate's `Cargo.toml`, or `#[cfg(rs_loom)]` warns:
//!
//! ```toml
//! [lints.rust]
//! unexpected_cfgs = { level = "warn", check-cfg = ["cfg(rs_loom)"] }
//! ```
//!
//! ## Layout
//!
//! | module | what it holds |
//! |---|---|
//! | [`env`](mod@env) | timeouts from the JVM TCK's environment variables; async-error collection (flop) |
//! | [`instruments`] | `ManualSubscriber`, `Latch`, `Promise`, `Receptacle`, `UpstreamTap` |
//! | [`outcome`] | passed / failed / skipped / untested, and how a test body stops |
//! | [`suite`] | test tables (`TestSpec`) bound to an implementation (`Suite`) |
//! | [`publisher`] | the publisher verification: hooks, the 46 checks (the JVM's 38 and eight of ours), the JVM name table |
//! | [`stream`] | the Publisher → `Stream` bridge verification (6 checks) |
//! | [`adapters`] | the Sink-as-subscriber (4) and async-callback (3) verifications, with the TCK's [`TestSink`](adapters::TestSink) and [`TestCallback`](adapters::TestCallback) |
//! | [`subscriber`] | the subscriber whitebox (27) and blackbox (26) verifications, `ManualPublisher`, the whitebox probe and puppet |
//! | [`processor`] | the identity-processor verification: 46 publisher + 27 whitebox checks through the processor, plus its own 4 (bounded buffering and an error with elements in flight held to what the processor declares) |
//! | [`loom`](mod@loom) | the loom mode: the concurrency-rule scenarios under `loom::model`, as suites over the same verifications (run with `RUSTFLAGS="--cfg rs_loom"`) |
//! | [`hints`] | the hints of violations many checks can meet on the way (a stream that does not end, an element too many) |
//! | [`harness`] | the `cargo test` harness (libtest-mimic), child-process isolation, and [`tck_main!`] |
//! | [`runner`] | parallel execution with progress, and the command line of a runner binary |
//! | [`report`] | records, tables, totals, JSON |
#![forbid(unsafe_code)]
// The TCK itself is ordinary test code: it uses std atomics, locks and threads directly
// (the workspace's disallowed-types list targets rs-impl's loom facade, not the TCK).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

pub mod adapters;
pub mod env;
pub mod harness;
pub mod hints;
pub mod instruments;
pub mod loom;
pub mod outcome;
pub mod processor;
pub mod publisher;
pub mod report;
pub mod runner;
pub mod stream;
pub mod subscriber;
pub mod suite;

/// The README's examples, compiled (and, where they can run, run) as doctests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
