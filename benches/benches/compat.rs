//! Criterion benches of the `to_stream` and `from_stream` scenarios: the async-Rust bridges,
//! ours against the channel bridges and `StreamExt::for_each` (groups
//! `<scenario>/<implementation>`). Definitions: benches/README.md. Run:
//! `cargo bench -p rs-benches --bench compat`.

// Benchmarks use std atomics and threads directly (no loom here).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use rs_benches::scenarios::compat;

/// Elements per iteration.
const N: u64 = 200_000;

fn bridges(c: &mut Criterion) {
    common::bench_scenario(c, &compat::to_stream_scenario(), N);
    common::bench_scenario(c, &compat::from_stream_scenario(), N);
}

criterion_group!(benches, bridges);
criterion_main!(benches);
