//! Shared by the processor and fanout test targets: an upstream driven by hand.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rs_api::Subscription;

/// An upstream subscription driven by hand: records what was requested and whether it was
/// cancelled; the test sends the elements itself.
#[derive(Debug, Default)]
pub(crate) struct Manual {
    /// The total requested.
    pub(crate) requested: AtomicU64,
    /// Whether `cancel` was called.
    pub(crate) cancelled: AtomicBool,
}

impl Subscription for Manual {
    fn request(&self, n: u64) {
        self.requested.fetch_add(n, Ordering::SeqCst);
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }
}
