//! Criterion benches of the `pipeline` scenario: a producer thread handing `u64`s to a
//! consumer thread, ours against the peers (groups `pipeline/<implementation>`). Thread start
//! is inside each iteration, amortised over `N`. Definitions: benches/README.md. Run:
//! `cargo bench -p rs-benches --bench pipeline`.

// Benchmarks use std atomics and threads directly (no loom here).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

/// Elements per iteration.
const N: u64 = 200_000;

fn pipeline(c: &mut Criterion) {
    common::bench_scenario(c, &rs_benches::scenarios::pipeline::scenario(), N);
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
