//! [`Wake`]: what the hand-off wakes when it has something for the other side — a task's
//! [`Waker`] (the stream bridges, the external subscriber) or an island's
//! [`Notifier`](crate::island::Notifier) (the batching boundary, which implements it in
//! `island/mailbox.rs`).
//!
//! The ring keeps one registered value per side and calls [`Wake::wake`] on a clone taken
//! outside its lock, so that whatever the wake-up runs (an executor's queue, an island's
//! mailbox) never runs under a lock of the hand-off.

use std::task::Waker;

/// Something that can be told, from any thread, that the hand-off has news for its owner.
///
/// `wake` must return promptly and must not run the owner's code on the caller's thread
/// (rule 3.4 for the paths that call it from `request` or `on_next`): a `Waker` schedules a
/// task, a `Notifier` posts to an island's mailbox.
pub(crate) trait Wake: Clone + Send + Sync + 'static {
    /// Tells the owner to look again.
    fn wake(&self);

    /// Whether `self` and `other` wake the same owner (so re-registering may keep the old
    /// one). Conservative by default: `false` replaces the registration.
    fn will_wake(&self, other: &Self) -> bool {
        let _ = other;
        false
    }
}

impl Wake for Waker {
    #[inline]
    fn wake(&self) {
        self.wake_by_ref();
    }

    #[inline]
    fn will_wake(&self, other: &Self) -> bool {
        Waker::will_wake(self, other)
    }
}
