//! The identity-processor verification over `rs_impl::processor::IdentityProcessor`, through
//! the `cargo test` harness: 68 tests, one per rule; skips and untested rules shown as
//! `ignored` with their reason. This is what a user's crate writes.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_api::{Error, Publisher};
use rs_impl::processor::IdentityProcessor;
use rs_tck::processor::{IdentityProcessorVerification, ProcessorHalves};
use rs_tck::publisher::BoxPublisher;

/// Verifies `IdentityProcessor`.
struct IdentityVerification;

impl IdentityProcessorVerification for IdentityVerification {
    type Item = u64;

    fn create_identity_processor(&self, buffer_size: usize) -> ProcessorHalves<u64> {
        ProcessorHalves::of(IdentityProcessor::new(buffer_size))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<BoxPublisher<u64>> {
        let p = IdentityProcessor::new(16);
        rs_impl::source::failed::<u64>(Error::msg("failed on purpose"))
            .subscribe(Box::new(p.clone()));
        Some(Box::new(p))
    }

    fn does_coordinated_emission(&self) -> bool {
        true
    }
}

rs_tck::tck_main!(rs_tck::processor::verify(
    "IdentityProcessor",
    IdentityVerification
));
