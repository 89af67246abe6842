//! Benchmarks of Reactive Streams for Rust against its peers. Under construction.
