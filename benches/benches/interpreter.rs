//! Criterion benches of the `interpreter` scenario (seed 002's InterpreterBenchmark): k
//! identity stages in one island with and without the finalisation gate, through the `Flow`
//! builder, as separate publisher/subscriber pairs, and as a `futures::stream` map chain
//! (groups `interpreter/<implementation>`). Definitions: benches/README.md. Run:
//! `cargo bench -p rs-benches --bench interpreter`.

#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

/// Elements per iteration (Pekko's benchmark: 100,000).
const N: u64 = 100_000;

fn interpreter(c: &mut Criterion) {
    common::bench_scenario(c, &rs_benches::scenarios::interpreter::scenario(), N);
}

criterion_group!(benches, interpreter);
criterion_main!(benches);
