//! Shared by the processor, fanout, boundary, island and island_flow test targets: an upstream
//! driven by hand, a wait for a condition that another thread makes true, and a panic hook that
//! keeps deliberate panics quiet.
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

/// Polls limited in [`wait_until`]: a bound on the number of looks, not on time, so that a
/// lost wake-up fails the test with a message instead of hanging CI, and a slow or loaded
/// machine (each look yields the thread) does not fail a correct implementation.
pub(crate) const MAX_POLLS: u64 = 200_000_000;

/// Waits, yielding the thread between looks, until `cond` holds; panics naming `what` after
/// [`MAX_POLLS`] looks.
pub(crate) fn wait_until(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..MAX_POLLS {
        if cond() {
            return;
        }
        std::thread::yield_now();
    }
    panic!("{what}: not reached after {MAX_POLLS} polls");
}

/// Silences the panic hook for deliberate panics only (those whose message says "deliberate").
pub(crate) fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !msg.contains("deliberate") {
                previous(info);
            }
        }));
    });
}
