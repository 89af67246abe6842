//! What callers hand to the fanout's drainer: the [`Inbox`], filled under a short lock that
//! is never held while calling out, and emptied by the drainer once per pass when its
//! `pending` flag says it holds something.

// The subscription handles are std `Arc`s (see `handle.rs`).
use std::collections::VecDeque;
use std::sync::Arc;

use rs_api::{BoxSubscriber, Error, SubscriptionRef};

use super::handle::Handle;

/// How the stream ends.
pub(super) enum Terminal {
    /// The producer or the upstream completed.
    Complete,
    /// The producer or the upstream failed (the upstream is not cancelled: rule 4.2).
    Fail(Error),
    /// The fanout gave up (subscription timeout): the upstream is cancelled.
    Abort(Error),
}

/// What callers hand to the drainer.
pub(super) struct Inbox<T> {
    /// Elements sent while someone else was draining, in order (each holds a permit for a
    /// channel; a processor's upstream is bounded by its demand).
    pub(super) elements: VecDeque<T>,
    /// Subscribers to start.
    pub(super) joining: Vec<(BoxSubscriber<T>, Arc<Handle>)>,
    /// Parked subscribers whose `request` un-parked them.
    pub(super) woken: Vec<u64>,
    /// Subscribers that cancelled or requested 0.
    pub(super) leaving: Vec<u64>,
    /// How the stream ends, from a producer, the upstream or the subscription timeout.
    pub(super) terminal: Option<Terminal>,
    /// The upstream's subscription (processor), until the drainer takes it.
    pub(super) upstream: Option<SubscriptionRef>,
    /// The upstream sent more than it was asked for (rule 1.1).
    pub(super) overflow: bool,
    /// Every publisher handle of a channel is gone: nobody can subscribe any more.
    pub(super) publishers_gone: bool,
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        Inbox {
            elements: VecDeque::new(),
            joining: Vec::new(),
            woken: Vec::new(),
            leaving: Vec::new(),
            terminal: None,
            upstream: None,
            overflow: false,
            publishers_gone: false,
        }
    }
}

impl<T> Inbox<T> {
    /// Moves everything into `taken` (whose vectors are empty), leaving `taken`'s spare
    /// allocations here: taking the inbox allocates nothing in the steady state.
    pub(super) fn take_into(&mut self, taken: &mut Inbox<T>) {
        std::mem::swap(&mut self.elements, &mut taken.elements);
        std::mem::swap(&mut self.joining, &mut taken.joining);
        std::mem::swap(&mut self.woken, &mut taken.woken);
        std::mem::swap(&mut self.leaving, &mut taken.leaving);
        taken.terminal = self.terminal.take();
        taken.upstream = self.upstream.take();
        taken.overflow = std::mem::take(&mut self.overflow);
        taken.publishers_gone = std::mem::take(&mut self.publishers_gone);
    }
}
