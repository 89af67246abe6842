//! Criterion benches of the `fanout` and `fanout-slow` scenarios: one producer, N subscribers,
//! ours against the peers (groups `fanout/<implementation>`). Definitions: benches/README.md.
//! Run: `cargo bench -p rs-benches --bench fanout`.

// Benchmarks use std atomics and threads directly (no loom here).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

/// Elements per iteration.
const N: u64 = 20_000;

fn fanout(c: &mut Criterion) {
    common::bench_scenario(c, &rs_benches::scenarios::fanout::scenario(), N);
    common::bench_scenario(c, &rs_benches::scenarios::fanout::slow_scenario(), N);
}

criterion_group!(benches, fanout);
criterion_main!(benches);
