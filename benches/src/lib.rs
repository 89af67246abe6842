//! # Benchmarks of Reactive Streams for Rust against its peers
//!
//! Unpublished. The workloads live here so that the criterion benches (`benches/*.rs`, one
//! file per component) and the side-by-side report (`bench-report`) run exactly the same
//! code. `benches/README.md` defines every scenario, parameter and peer.
//!
//! | module | what it holds |
//! |---|---|
//! | [`scenario`] | the types: a scenario, its parameters, ours and the peers, the checksum |
//! | [`scenarios`] | one module per component with its workloads, and the list of them ([`scenarios::all`]) |
//! | [`alloc`] | the counting global allocator (every thread) |
//! | [`harness`] | alternating rounds, medians, allocation per element |
//! | [`machine`] | the machine behind the figures |
//! | [`report`] | `report.json` and `report.md` |
//! | [`chart`] | SVG charts of throughput against a scenario's parameter |

// Benchmarks use std atomics and threads directly: they are not modelled under loom, and the
// peers they compare against do the same.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

pub mod alloc;
pub mod chart;
pub mod harness;
pub mod machine;
pub mod report;
pub mod scenario;
pub mod scenarios;
