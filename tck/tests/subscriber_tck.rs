//! The subscriber verifications over a ready-made subscriber (`rs_impl::subscriber::collect`),
//! through the `cargo test` harness: one test per rule, for whitebox and blackbox; skips and
//! untested rules shown as `ignored` with their reason. This is what a user's crate writes.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_api::Subscriber;
use rs_impl::subscriber::{collect, Handle, RequestStrategy};
use rs_tck::subscriber::{
    ProbeReporting, SubscriberBlackboxVerification, SubscriberPuppet,
    SubscriberWhiteboxVerification, WhiteboxSubscriberProbe,
};

/// Verifies `collect(RequestStrategy::Prefetch(4))`.
struct CollectVerification;

/// `collect` requests by its strategy; the puppet only needs to cancel.
struct CancelThroughHandle(Handle<Vec<u64>>);

impl SubscriberPuppet for CancelThroughHandle {
    fn trigger_request(&self, _elements: u64) {}
    fn signal_cancel(&self) {
        self.0.cancel();
    }
}

impl SubscriberWhiteboxVerification for CollectVerification {
    type Item = u64;

    fn create_subscriber(
        &self,
        probe: WhiteboxSubscriberProbe<u64>,
    ) -> impl Subscriber<u64> + 'static {
        let (s, handle) = collect(RequestStrategy::Prefetch(4));
        ProbeReporting::new(s, probe, CancelThroughHandle(handle))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

impl SubscriberBlackboxVerification for CollectVerification {
    type Item = u64;
    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        collect::<u64>(RequestStrategy::Prefetch(4)).0
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

rs_tck::tck_main!(
    rs_tck::subscriber::whitebox::verify("collect", CollectVerification),
    rs_tck::subscriber::blackbox::verify("collect", CollectVerification),
);
