//! The publisher verification over a built-in publisher (`source::range`), through the
//! `cargo test` harness: one test per rule, skips shown as `ignored` with their reason. This
//! is what a user's crate writes (see the `rs_tck` crate docs).
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_api::{Error, Publisher};
use rs_tck::publisher::PublisherVerification;

/// Verifies `rs_impl::source::range`.
struct RangeVerification;

impl PublisherVerification for RangeVerification {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        rs_impl::source::range(0..elements)
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(rs_impl::source::failed(Error::msg("failed on purpose")))
    }
}

rs_tck::tck_main!(rs_tck::publisher::verify(
    "source::range",
    RangeVerification
));
