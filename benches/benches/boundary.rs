//! Criterion benches of the `boundary` scenario (seed 001's AsyncBoundaryThroughputBenchmark):
//! `0..100_000` through K identity stages each behind an async boundary, batched and unbatched,
//! on the default runtime and on tokio, next to chains of crossbeam (per element and
//! hand-batched), tokio mpsc and futures mpsc (groups `boundary/<implementation>`).
//! Definitions: benches/README.md. Run: `cargo bench -p rs-benches --bench boundary`.

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

/// Elements per iteration (Pekko's benchmark: 100,000).
const N: u64 = 100_000;

fn boundary(c: &mut Criterion) {
    common::bench_scenario(c, &rs_benches::scenarios::boundary::scenario(), N);
}

criterion_group!(benches, boundary);
criterion_main!(benches);
