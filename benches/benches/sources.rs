//! Criterion benches of the `source` scenario: a cold source drained into a subscriber on one
//! thread, ours against the peers (groups `source/<implementation>`). Definitions:
//! benches/README.md. Run: `cargo bench -p rs-benches --bench sources`.

// Benchmarks use std atomics and threads directly (no loom here).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

/// Elements per iteration.
const N: u64 = 100_000;

fn sources(c: &mut Criterion) {
    common::bench_scenario(c, &rs_benches::scenarios::source::scenario(), N);
}

criterion_group!(benches, sources);
criterion_main!(benches);
