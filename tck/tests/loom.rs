//! The TCK's loom mode over every registered implementation (the runner's registry, included
//! from the binary: the same verification values the runner uses), plus the sources with no
//! elements, through the `cargo test` harness: one test per scenario and implementation, each in
//! a child process of its own.
//!
//! In the loom build (`scripts/loom.sh`: `RUSTFLAGS="--cfg rs_loom"`, `LOOM_MAX_PREEMPTIONS=2`,
//! target dir `target/loom`) every scenario explores its interleavings; in a normal build each
//! runs once with std types (a smoke test). The broken implementations the scenarios must reject
//! are in `loom_self_test.rs`.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[allow(dead_code)] // the runner's half of the registry (`all`) is not used here
#[path = "../src/bin/rs-tck/registry/mod.rs"]
mod registry;

use rs_api::{BoxPublisher, Error, Publisher};
use rs_impl::source;
use rs_tck::publisher::PublisherVerification;
use rs_tck::suite::Suite;

fn main() {
    let edge = [
        // `empty` completes at once: the 1.8 check of the cancel race does not apply; the
        // concurrent and re-entrant requests must be answered by one terminal signal.
        only(
            "source::empty (any n)",
            || Box::new(source::empty::<u64>()),
            "required_spec303_reentrant_and_concurrent_request",
        ),
        // `never` has no elements: cancel racing the requests must still drop the subscriber.
        only(
            "source::never (any n)",
            || Box::new(source::never::<u64>()),
            "required_spec312_cancel_racing_emission",
        ),
        // `failed`: exactly one on_error, whatever races it.
        only(
            "source::failed (any n)",
            || Box::new(source::failed::<u64>(Error::msg("boom"))),
            "required_spec303_reentrant_and_concurrent_request",
        ),
    ];
    rs_tck::harness::main(registry::loom().into_iter().chain(edge));
}

/// A publisher without elements, standing in for every `n`: the scenarios that fit it.
struct AnyLength(fn() -> BoxPublisher<u64>);

impl PublisherVerification for AnyLength {
    type Item = u64;

    fn create_publisher(&self, _elements: u64) -> impl Publisher<u64> + Send + 'static {
        (self.0)()
    }
}

/// The loom suite of `create` with only `scenario`.
fn only(name: &str, create: fn() -> BoxPublisher<u64>, scenario: &str) -> Suite {
    let mut suite = rs_tck::loom::verify_publisher(name, AnyLength(create));
    suite.tests.retain(|t| t.name == scenario);
    assert_eq!(suite.tests.len(), 1, "no scenario named {scenario}");
    suite
}
