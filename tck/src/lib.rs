//! # The Reactive Streams verification kit (TCK) for Rust
//!
//! Proves a `Publisher`, a `Subscriber` or a `Processor` interoperable: the JVM
//! TCK's tests, under the JVM's names in snake case, plus real checks for rules the JVM leaves
//! untested wherever Rust makes them observable.
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
//! use rs_tck::publisher::{BoxPublisher, PublisherVerification};
//!
//! struct MyPublisherVerification;
//! impl PublisherVerification for MyPublisherVerification {
//!     type Item = u64;
//!     fn create_publisher(&self, elements: u64) -> BoxPublisher<u64> {
//!         Box::new(rs_impl::source::range(0..elements))
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
//! `cargo run --release -p rs-tck [-- --json report.json]` runs every verification over every
//! implementation in [`registry::builtins`], prints a table per implementation and, last,
//! `N passed, N failed, N skipped` (untested counted as skipped); it exits 1 if anything
//! failed.
//!
//! ## Layout
//!
//! | module | what it holds |
//! |---|---|
//! | [`env`](mod@env) | timeouts from the JVM TCK's environment variables; async-error collection (flop) |
//! | [`probe`] | `ManualSubscriber`, `Latch`, `Promise`, `Receptacle` |
//! | [`outcome`] | passed / failed / skipped / untested, and how a test body stops |
//! | [`suite`] | test tables (`TestSpec`) bound to an implementation (`Suite`) |
//! | [`publisher`] | the publisher verification: hooks, the 38 tests, the JVM name table |
//! | [`subscriber`] | the subscriber whitebox (27) and blackbox (26) verifications, `ManualPublisher`, the whitebox probe and puppet |
//! | [`processor`] | the identity-processor verification: 38 publisher + 27 whitebox tests through the processor, plus its own 3 |
//! | [`harness`] | the `cargo test` harness (libtest-mimic) and [`tck_main!`] |
//! | [`runner`] | parallel execution with progress |
//! | [`report`] | records, tables, totals, JSON |
//! | [`registry`] | the built-in implementations the runner verifies |
//! | [`loom`](mod@loom) | the loom mode: the concurrency-rule scenarios under `loom::model`, for your implementation built on `rs_impl::loom` (run with `RUSTFLAGS="--cfg rs_loom"`) |
#![forbid(unsafe_code)]
// The TCK itself is ordinary test code: it uses std atomics, locks and threads directly
// (the workspace's disallowed-types list targets rs-impl's loom facade, not the TCK).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

pub mod env;
pub mod harness;
pub mod loom;
pub mod outcome;
pub mod probe;
pub mod processor;
pub mod publisher;
pub mod registry;
pub mod report;
pub mod runner;
pub mod subscriber;
pub mod suite;

/// The README's examples, compiled (and, where they can run, run) as doctests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
