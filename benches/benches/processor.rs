//! Criterion benches of the `processor` scenario: one source through the identity processor to
//! K subscribers on one thread, ours against the peers (groups `processor/<implementation>`).
//! Definitions: benches/README.md. Run: `cargo bench -p rs-benches --bench processor`.

// Benchmarks use std atomics and threads directly (no loom here).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

/// Elements per iteration.
const N: u64 = 100_000;

fn processor(c: &mut Criterion) {
    common::bench_scenario(c, &rs_benches::scenarios::processor::scenario(), N);
}

criterion_group!(benches, processor);
criterion_main!(benches);
