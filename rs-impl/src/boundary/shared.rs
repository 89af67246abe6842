//! One boundary's shared state: its hand-off ring (see [`crate::handoff`] for the ring's
//! protocol and the argument behind its `unsafe` code) and the little the boundary adds —
//! who produces into it and whether an island consumes it.

use std::fmt;

use crate::handoff::Ring;
use crate::island::Notifier;
use crate::loom::sync::{Arc, Mutex, MutexGuard};

use super::BoundaryStats;

/// Who writes into a boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Producer {
    /// Nobody yet.
    None,
    /// A foreign publisher, through a `BoundarySubscriber` it signals.
    Foreign,
    /// An output side of another island, writing batches directly.
    Internal,
}

/// The rare state of a boundary, behind the mutex (never taken per element or per batch).
#[derive(Debug)]
pub(crate) struct Control {
    pub(crate) producer: Producer,
    /// The consumer island's stage, once it started: a producer claimed later (an output side
    /// taking a `BoundarySubscriber` over) tells it through this. The ring's own wake slot
    /// holds it too, for the park protocol.
    pub(crate) consumer: Option<Notifier>,
    /// An island consumes this boundary (one may).
    pub(crate) consumer_claimed: bool,
}

/// One boundary: its ring and its control.
pub(crate) struct Shared<T> {
    pub(crate) ring: Arc<Ring<T, Notifier>>,
    control: Mutex<Control>,
}

impl<T> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Boundary")
            .field("ring", &self.ring)
            .finish_non_exhaustive()
    }
}

impl<T> Shared<T> {
    /// A boundary of `size` slots (rounded up to a power of two, at least 2).
    pub(crate) fn new(size: usize) -> Arc<Self> {
        Arc::new(Shared {
            ring: Ring::new(size.max(2)),
            control: Mutex::new(Control {
                producer: Producer::None,
                consumer: None,
                consumer_claimed: false,
            }),
        })
    }

    /// The ring's size (a power of two).
    pub(crate) fn size(&self) -> usize {
        self.ring.size()
    }

    pub(crate) fn control(&self) -> MutexGuard<'_, Control> {
        self.control.lock()
    }

    /// What went through the boundary so far.
    pub(crate) fn stats(&self) -> BoundaryStats {
        let s = self.ring.stats();
        BoundaryStats {
            published: s.published,
            flushes: s.flushes,
            granted: s.granted,
            grants: s.grants,
        }
    }

    /// Claims the producer side for `kind`; `false` if it is taken or the consumer is gone.
    pub(crate) fn claim(&self, kind: Producer, control: &mut Control) -> bool {
        if control.producer != Producer::None || self.ring.cancelled() {
            return false;
        }
        control.producer = kind;
        true
    }

    /// Claims the consumer side; `false` if an island consumes it already.
    pub(crate) fn claim_consumer(&self) -> bool {
        !std::mem::replace(&mut self.control.lock().consumer_claimed, true)
    }
}
