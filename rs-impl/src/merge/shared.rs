//! What a subscribed inner shares with whoever drains it (a plain-publisher merge's drain
//! loop, or a flow's fan-in stage): [`InnerShared`].

use std::fmt;

use rs_api::SubscriptionRef;

use crate::handoff::{spsc, SpscConsumer, SpscProducer};
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::Mutex;

/// What the drain must reach of an inner: its end (kept outside its queue), its queue once
/// the producer made one, its subscription.
pub(crate) struct InnerShared<U> {
    /// The inner's terminal signal was received; set after its last element was queued.
    done: AtomicBool,
    /// The producer made a queue; its consumer half waits in `link`.
    has_queue: AtomicBool,
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
