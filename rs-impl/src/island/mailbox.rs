//! The island's mailbox: how the outside world (a subscriber's `request`, a foreign
//! publisher's `on_next`) reaches a stage on a parked or running island, without ever running
//! island code on the poster's thread.
//!
//! # Protocol (no lost wake-up)
//!
//! `state` holds `RUNNING` while the island is being polled and `NOTIFIED` when mail arrived
//! since the island last looked. A poster first records its event in the stage's own shared
//! state, then calls [`Notifier::notify`]: it queues the stage (once, until the island takes
//! it) and sets `NOTIFIED`. Only the poster that finds the state `IDLE` (parked, nothing
//! pending) wakes the island's waker. The island, before parking, registers its waker and then
//! moves `RUNNING` to `IDLE` with a compare-and-exchange: a `NOTIFIED` set meanwhile makes the
//! exchange fail and the island runs again instead of parking. So a post is either seen by the
//! running island, or finds `IDLE` after the waker was registered and wakes it. The loom model
//! `island_request_races_park` checks this, next to a broken twin that parks without the check.
//!
//! Every primitive here comes from the [loom facade](crate::loom).

use std::task::Waker;

use crate::handoff::Wake;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Mutex};

/// Parked: the next notification wakes the waker.
const IDLE: usize = 0;
/// Being polled.
const RUNNING: usize = 1;
/// Mail arrived since the island last drained its queue.
const NOTIFIED: usize = 2;

/// The island's mailbox (see the module docs).
#[derive(Debug)]
pub(crate) struct Mailbox {
    /// `IDLE`, `RUNNING`, with `NOTIFIED` or'ed in.
    state: AtomicUsize,
    /// The waker registered by the last park.
    waker: Mutex<Option<Waker>>,
    /// Stages with unread mail, in posting order; each at most once (see `queued`).
    queue: Mutex<Vec<u32>>,
    /// Per stage: already in `queue`.
    queued: Box<[AtomicBool]>,
}

impl Mailbox {
    /// A mailbox for `stages` stages. It starts `NOTIFIED`: nothing can be woken before the
    /// island's first poll, which drains everything posted before it.
    pub(crate) fn new(stages: usize) -> Self {
        Mailbox {
            state: AtomicUsize::new(NOTIFIED),
            waker: Mutex::new(None),
            queue: Mutex::new(Vec::new()),
            queued: (0..stages).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// Queues `stage` and wakes the island if it is parked.
    pub(crate) fn post(&self, stage: u32) {
        if !self.queued[stage as usize].swap(true, Ordering::AcqRel) {
            self.queue.lock().push(stage);
        }
        if fault::active(Fault::MailboxPost) {
            return; // the loom twin: a post that neither notifies nor wakes
        }
        if self.state.fetch_or(NOTIFIED, Ordering::AcqRel) == IDLE {
            let waker = self.waker.lock().take();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }

    /// The island starts a run: everything posted so far will be drained by it.
    pub(crate) fn begin_run(&self) {
        // A swap, not a store (the same value either way): loom 0.7.3 keeps each atomic's
        // modification order partial, and a plain store by the island is unordered with a
        // poster's earlier `fetch_or` that the island never read, so loom let a later post
        // read that stale value, miss the island's park and report a deadlock that the
        // memory model rules out (issue #14: the TCK's loom scenarios over `compat::from_stream`
        // hit it; the imprecision itself is reproduced in rs-impl/tests/loom/stream.rs). A
        // read-modify-write reads the latest value, which orders it after every earlier post.
        self.state.swap(RUNNING, Ordering::SeqCst);
    }

    /// Moves the stages with mail into `into` (which must be empty), clearing their
    /// `queued` flags before their handlers run, so a post during a handler queues again.
    pub(crate) fn take_queued(&self, into: &mut Vec<u32>) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut *self.queue.lock(), into);
        for &s in into.iter() {
            if fault::active(Fault::MailboxClear) {
                // The loom twin: a plain store (the lost cancel described below).
                self.queued[s as usize].store(false, Ordering::Release);
                continue;
            }
            // A read-modify-write, not a store: a poster whose `swap(true)` found the flag
            // still set (and so did not queue again) comes before this swap in the flag's
            // modification order, and this acquire makes its recorded event visible to the
            // handler about to run. A plain store let the handler miss a cancel (found by the
            // loom model `island_cancel_ends_a_parked_island`).
            self.queued[s as usize].swap(false, Ordering::AcqRel);
        }
    }

    /// Whether the island is being polled right now (on some thread).
    pub(crate) fn is_running(&self) -> bool {
        self.state.load(Ordering::Acquire) & RUNNING != 0
    }

    /// Registers `waker` and parks unless mail arrived meanwhile; `true` if parked.
    pub(crate) fn park(&self, waker: &Waker) -> bool {
        {
            let mut slot = self.waker.lock();
            match &*slot {
                Some(w) if w.will_wake(waker) => {}
                _ => *slot = Some(waker.clone()),
            }
        }
        if fault::active(Fault::MailboxPark) {
            // The loom twin: parks without the re-check.
            self.state.store(IDLE, Ordering::SeqCst);
            return true;
        }
        self.state
            .compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// A handle that posts to one stage of an island from any thread: the stage's
/// [`on_async_input`](super::Stage::on_async_input) runs on the island soon after.
///
/// Obtained inside the island with [`Ctx::notifier`](super::Ctx::notifier) and handed to
/// whatever feeds the stage (a subscription, a subscriber). Posting never runs island code on
/// the caller's thread and never blocks on the island: it is an atomic swap, at most one short
/// lock, and a waker call (rule 3.4).
#[derive(Debug, Clone)]
pub struct Notifier {
    pub(crate) mailbox: Arc<Mailbox>,
    pub(crate) stage: u32,
}

impl Notifier {
    /// Tells the island that this stage has mail.
    ///
    /// # Examples
    ///
    /// See [`Ctx::notifier`](super::Ctx::notifier).
    pub fn notify(&self) {
        self.mailbox.post(self.stage);
    }

    /// Whether the island is being polled right now.
    pub(crate) fn is_running(&self) -> bool {
        self.mailbox.is_running()
    }
}

/// A boundary's hand-off ring wakes the island on the other side through its stage's
/// notifier: a post to the mailbox, never island code on the caller's thread.
impl Wake for Notifier {
    #[inline]
    fn wake(&self) {
        self.notify();
    }

    fn will_wake(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.mailbox, &other.mailbox) && self.stage == other.stage
    }
}
