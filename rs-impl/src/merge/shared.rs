//! What a subscribed inner shares with whoever drains it (a plain-publisher merge's drain
//! loop, or a flow's fan-in stage): [`InnerShared`].

use std::fmt;

use rs_api::SubscriptionRef;

use crate::handoff::{spsc, SpscConsumer, SpscProducer};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::loom::sync::Mutex;

/// What the drain must reach of an inner: its end (kept outside its queue), its queue once
/// the producer made one, its subscription.
pub(crate) struct InnerShared<U> {
    /// The inner's terminal signal was received; set after its last element was queued.
    done: AtomicBool,
    /// The producer made a queue; its consumer half waits in `link`.
    has_queue: AtomicBool,
    /// The drain will visit this inner: set by the producer (after it queued an element or
    /// ended), which lists the inner when it set it from `false`; cleared by the drain at the
    /// start of each visit, before it looks at the end and the queue (see
    /// [`list`](Self::list)). `true` from the start: the drain visits every inner it admits.
    listed: AtomicBool,
    /// The inner's place in the drain (set when it is admitted, before its first visit).
    slot: AtomicUsize,
    link: Mutex<Link<U>>,
}

/// The rarely touched part of an [`InnerShared`].
struct Link<U> {
    subscription: Option<SubscriptionRef>,
    consumer: Option<SpscConsumer<U>>,
    cancelled: bool,
}

impl<U> fmt::Debug for InnerShared<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InnerShared")
            .field("done", &self.done.load(Ordering::Relaxed))
            .field("has_queue", &self.has_queue.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<U> InnerShared<U> {
    pub(crate) fn new() -> Self {
        InnerShared {
            done: AtomicBool::new(false),
            has_queue: AtomicBool::new(false),
            listed: AtomicBool::new(true),
            slot: AtomicUsize::new(usize::MAX),
            link: Mutex::new(Link {
                subscription: None,
                consumer: None,
                cancelled: false,
            }),
        }
    }

    /// Whether the inner's terminal signal came (read it before looking at the queue).
    #[inline]
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The terminal signal came, after every element was queued or emitted.
    pub(crate) fn set_done(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// With the drain held: the inner's place in the drain, before its first visit.
    pub(crate) fn set_slot(&self, slot: usize) {
        self.slot.store(slot, Ordering::Relaxed);
    }

    /// After an element was queued or the terminal signal recorded: `Some(place)` when the
    /// inner must be put on the drain's ready list (the flag was clear: the drain's last
    /// visit began before this change, and nothing else will bring it back), `None` when the
    /// drain will visit it anyway.
    ///
    /// Both sides swap the flag (a read-modify-write each, acquire and release): either this
    /// swap comes before the drain's clearing one, which then sees what was queued before it
    /// (and the visit that follows reads it), or after it, and this one reads `false` and
    /// lists the inner again (and sees its place, stored before that clear).
    #[inline]
    pub(crate) fn list(&self) -> Option<usize> {
        if self.listed.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(self.slot.load(Ordering::Relaxed))
    }

    /// With the drain held, at the start of a visit: clears the listed flag (before the end
    /// and the queue are looked at; see [`list`](Self::list)).
    #[inline]
    pub(crate) fn unlist(&self) {
        if !fault::active(Fault::MergeUnlistsAfterVisit) {
            self.listed.swap(false, Ordering::AcqRel);
        }
    }

    /// The broken twin's clear, after the visit (loom builds only): see
    /// [`Fault::MergeUnlistsAfterVisit`].
    #[inline]
    pub(crate) fn unlist_late(&self) {
        if fault::active(Fault::MergeUnlistsAfterVisit) {
            self.listed.swap(false, Ordering::AcqRel);
        }
    }

    /// The queue's consumer half, once the producer made the queue (taken once).
    #[inline]
    pub(crate) fn take_consumer(&self) -> Option<SpscConsumer<U>> {
        if !self.has_queue.load(Ordering::Acquire) {
            return None;
        }
        self.link.lock().consumer.take()
    }

    /// Makes the inner's queue of `capacity` (on the first element that could not go straight
    /// downstream); the producer keeps the producer half.
    pub(crate) fn make_queue(&self, capacity: usize) -> SpscProducer<U> {
        let (p, c) = spsc(capacity);
        self.link.lock().consumer = Some(c);
        self.has_queue.store(true, Ordering::Release);
        p
    }

    /// The inner's subscription, once it arrived.
    pub(crate) fn subscription(&self) -> Option<SubscriptionRef> {
        self.link.lock().subscription.clone()
    }

    /// Keeps the inner's subscription; `false` (and the subscription is cancelled) when the
    /// merge let the inner go already.
    pub(crate) fn subscribed(&self, s: &SubscriptionRef) -> bool {
        let mut link = self.link.lock();
        if link.cancelled {
            drop(link);
            s.cancel();
            return false;
        }
        link.subscription = Some(s.clone());
        true
    }

    /// Lets the inner go: its subscription is cancelled now or when it arrives.
    pub(crate) fn cancel(&self) {
        let s = {
            let mut link = self.link.lock();
            link.cancelled = true;
            link.consumer = None;
            link.subscription.take()
        };
        if let Some(s) = s {
            s.cancel();
        }
    }

    /// Whether the merge let the inner go.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.link.lock().cancelled
    }
}
