//! The identity-processor verification over `rs_impl::processor::IdentityProcessor`, through
//! the `cargo test` harness: 68 tests, one per rule; skips and untested rules shown as
//! `ignored` with their reason. This is what a user's crate writes.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_api::{Error, Processor, Publisher, PublisherExt};
use rs_impl::processor::IdentityProcessor;
use rs_tck::processor::IdentityProcessorVerification;

/// Verifies `IdentityProcessor`.
struct IdentityVerification;

impl IdentityProcessorVerification for IdentityVerification {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        IdentityProcessor::new(buffer_size)
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let p = IdentityProcessor::new(16);
        rs_impl::source::failed::<u64>(Error::msg("failed on purpose")).subscribe_with(p.clone());
        Some(p)
    }

    fn does_coordinated_emission(&self) -> bool {
        true
    }
}

rs_tck::tck_main!(rs_tck::processor::verify(
    "IdentityProcessor",
    IdentityVerification
));
