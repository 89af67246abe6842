//! Deliberate faults for the loom models' broken twins: the one mechanism by which a model
//! switches off one protection of the real code, to show that loom rejects the bug that
//! protection prevents.
//!
//! A twin calls [`inject`] (loom builds only) before its model runs; the code under test asks
//! [`active`] at the one place where the protection lives. Outside loom builds the [`Fault`]
//! enum is private to the crate and [`active`] is a constant `false` that the compiler folds
//! away, so no fault exists in any build a user runs.
//!
//! The switch is process-wide: broken twins run in a child process of their own
//! ([`assert_rejected`](super::assert_rejected)), so no other test sees it.

macro_rules! faults {
    ($( $(#[$doc:meta])* $name:ident, )*) => {
        /// One protection of the real code, switched off on purpose (loom builds only).
        #[cfg(rs_loom)]
        #[doc(hidden)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Fault {
            $( $(#[$doc])* $name, )*
        }

        /// One protection of the real code (outside loom builds no fault can be switched on).
        #[cfg(not(rs_loom))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(dead_code)]
        pub(crate) enum Fault {
            $( $(#[$doc])* $name, )*
        }
    };
}

faults! {
    // --- the hand-off ring (`handoff`) and the batching boundary's island ends
    /// The writer sets its terminal bit before its last flush.
    TerminalBeforeFlush,
    /// The reader's leave skips the elements it was given without dropping them.
    CancelForgetsBuffer,
    /// The reader announces new credit before it stores it.
    GrantAfterNotify,
    /// The reader parks without comparing the state it parked on with what it last saw.
    ReaderParksBlind,
    /// The writer hands a subscription over without looking whether the reader left.
    HandoverIgnoresLeave,
    /// The boundary's input side keeps delivering buffered input after the upstream failed.
    ErrorWaitsForInput,
    // --- the one rule-2.4 in-flight guard (`handoff::InFlight`: the boundary's input side,
    // the stream bridge, the external subscriber)
    /// The request looks for the end with a plain load, the end does not wait.
    RequestGuard,
    // --- the island's mailbox and interpreter
    /// `park` skips the re-check after registering the waker.
    MailboxPark,
    /// `post` neither notifies nor wakes.
    MailboxPost,
    /// `take_queued` resets a stage's queued flag with a plain store.
    MailboxClear,
    /// The stage table does not release a finalised stage's state.
    StageRelease,
    // --- the fanout
    /// A leaving subscriber keeps its hold on the buffer (its cursor stays in the ring).
    LeaveKeepsHold,
    /// Parking a subscriber ignores the demand its park returned (the total in the word the
    /// parked bit was set in), as a park that does not re-read the demand would.
    ParkWithoutRecheck,
    /// Completion reaches only the caught-up subscribers with demand, not the parked ones.
    CompleteSkipsParked,
    /// A drain frees space without handing it back to the waiting senders.
    NoWakeOnSpace,
    // --- merge (`crate::merge`)
    /// The drain pass does not look at the cancel flag.
    MergeIgnoresCancel,
    /// The drain looks at an inner's queue before its terminal flag.
    MergeEndBeforeQueue,
    /// An inner's fast path does not look at its own queue.
    MergeFastPathSkipsQueue,
    /// The typed lane takes the room it first read as unbounded (it never reads the demand
    /// again, so it runs past what the subscriber asked for).
    MergeTypedReadsDemandOnce,
    /// An inner that reaches the drain after the subscription ended is kept in the ended
    /// state instead of being let go (so it is subscribed to, and never cancelled).
    MergeAdmitsAfterEnd,
    /// The drain clears an inner's ready-list flag after its visit instead of before it (an
    /// element queued after the visit's last look at the queue finds the flag set, is not
    /// listed, and waits forever).
    MergeUnlistsAfterVisit,
    // --- the producer API (push source, fanout channel)
    /// A send going through the inbox does not look at the end under the inbox's lock.
    SendIgnoresEnd,
    // --- the RSocket connection's stream table
    /// Opening a stream does not look whether the table was closed.
    OpenIgnoresClose,
    /// The writer opening a stream does not look whether its subscriber cancelled meanwhile.
    OpenIgnoresCancel,
    /// An inbound stream's cancel does not run the drain that drops the subscriber.
    CancelSkipsDrain,
    /// The writer opening a request_response lets the request's lock go between taking the
    /// request and recording its id (a drop of the `Response` in between is not seen).
    ResponseOpenSplit,
    // --- the ready-made subscribers' handle (`crate::subscriber`)
    /// A thread about to wait on the handle counts itself as waiting only after letting the
    /// outcome's lock go once (the outcome, which notifies only counted waiters, can be set in
    /// between, and the wait is never woken).
    WaiterCountedLate,
    // --- keyed lanes (`crate::lanes`)
    /// The dispatcher drops an element whose lane is full instead of holding it.
    LaneFullDrops,
    /// The merging island completes when the first lane completes, not the last.
    LanesCompleteOnFirstLane,
}

#[cfg(rs_loom)]
#[allow(clippy::disallowed_types)]
static ACTIVE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Switches `fault` on for the rest of this process (loom builds only; call it in the broken
/// twin's child process, before its model runs).
#[cfg(rs_loom)]
#[doc(hidden)]
pub fn inject(fault: Fault) {
    ACTIVE.fetch_or(1 << fault as u32, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `fault` is switched on.
#[cfg(rs_loom)]
#[inline]
#[allow(dead_code)]
pub(crate) fn active(fault: Fault) -> bool {
    ACTIVE.load(std::sync::atomic::Ordering::Relaxed) & (1 << fault as u32) != 0
}

/// Whether `fault` is switched on: never, outside loom builds.
#[cfg(not(rs_loom))]
#[inline(always)]
#[allow(dead_code)]
pub(crate) const fn active(_: Fault) -> bool {
    false
}
