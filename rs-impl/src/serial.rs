//! The serial drain loop: the one place where signals to a subscriber are serialised.
//!
//! # Contract
//!
//! A [`DrainLoop`] guards some drainer-only state `S` (typically the subscriber, the source and
//! an `emitted` count). Anyone — the `subscribe` caller, a `request` from another thread, a
//! `request` or `cancel` made re-entrantly from inside `on_next` — calls
//! [`DrainLoop::drain`] after recording what changed (demand in a [`Demand`], a cancel flag).
//!
//! * **One drainer at a time (rule 1.3).** The call that moves the work-in-progress counter from
//!   0 becomes the drainer and runs `pass` with exclusive access to `S`; every other call only
//!   records that there is more to do and returns at once. Signals made from `pass` therefore
//!   never overlap, and each happens-before the next (the counter's acquire/release edges: the
//!   counter alone hands the state from one drainer to the next, with no lock).
//! * **Bounded recursion (3.3).** A `request` from inside `on_next` finds the counter non-zero,
//!   bumps it and returns: recursion depth is 1, however long the stream.
//! * **No lost wake-up.** The drainer subtracts exactly the work it has seen and runs another
//!   pass whenever the counter shows work recorded during the last pass; it leaves only when the
//!   counter reaches 0, after which the next caller becomes the drainer.
//! * **Prompt callers (3.4, 3.5).** Nobody ever waits: a non-drainer returns at once, and a new
//!   drainer starts only once the counter is back at 0, i.e. after the previous drainer's last
//!   access to the state.
//! * **Values without a queue when idle.** A producer that hands values to the drainer (an
//!   upstream's `on_next` into a processor) can use [`DrainLoop::try_drain_with`]: when nobody
//!   drains, the value goes straight into the state and the caller drains (no queue, no lock
//!   besides the state's); otherwise the caller queues it and calls [`DrainLoop::drain`].
//! * **`pass` must not panic.** Catch subscriber panics at the callback (rule 2.13); a panic that
//!   escapes `pass` propagates to the caller and leaves the loop wedged (no further passes).
//!
//! Which thread runs the subscriber's callbacks: whichever thread is draining — the `subscribe`
//! caller, or a `request`/`cancel` caller. This is the "driven from the caller's thread" model of
//! the cold sources in [`crate::source`].
//!
//! # Example: a user-written publisher
//!
//! `Repeat` publishes `value` `count` times. Every caller — `subscribe`, `request`, `cancel` —
//! records what changed and then runs **the same pass** through [`DrainLoop::drain`] (the
//! pass of whichever call becomes the drainer is the one that runs, so all of them must do the
//! same work). Everything rule-related is in that one pass.
//!
//! The example is `rs-impl/examples/repeat.rs` (`cargo run -p rs-impl --example repeat`); the
//! TCK's runner registers it, so it passes the publisher verification and, in the loom build
//! (`--cfg rs_loom`), every loom scenario. Its subscription handle is a std `Arc`, as every
//! [`SubscriptionRef`](rs_api::SubscriptionRef) is, while everything inside the handle comes
//! from the [loom facade](crate::loom). For a publisher that signals from a thread of its own
//! instead, see `rs-impl/examples/thread_publisher.rs`.
//!
//! ```
#![doc = include_str!("../examples/repeat.rs")]
//! ```
//!
//! [`Demand`]: crate::demand::Demand

use std::fmt;

use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};

/// A work-in-progress drain loop guarding drainer-only state `S`.
///
/// See the [module documentation](self) for the contract and an example.
///
/// The state sits in a cell that only the drainer touches, handed from one drainer to the next
/// by the counter alone (the RxJava/Reactor shape). It used to sit behind a mutex as well; the
/// lock was uncontended by construction but cost two more atomic read-modify-writes per drain,
/// which a producer-driven publisher pays per element (the fanout's `send`: 4 → 2; the
/// figures are in `docs/benchmarks.md`). The loom
/// models of `rs-impl/tests/loom/drain.rs` and every source, processor and fanout model check
/// the hand-over: loom reports any access to the cell that is not ordered after the previous
/// drainer's (a `Relaxed` counter makes them fail).
pub struct DrainLoop<S> {
    /// Work recorded and not yet seen by the drainer; 0 when nobody is draining.
    wip: AtomicUsize,
    /// The drainer's state: accessed only by the caller that moved `wip` from 0, until its last
    /// decrement brings `wip` back to 0.
    state: UnsafeCell<S>,
    /// Calls of [`drain`](Self::drain) (unit tests count the loop's entries with it).
    #[cfg(test)]
    calls: AtomicUsize,
}

impl<S> fmt::Debug for DrainLoop<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DrainLoop")
            .field("draining", &self.is_draining())
            .finish_non_exhaustive()
    }
}

// SAFETY: the state is only reached through `drain` and `try_drain_with`, by one thread at a
// time (the drainer, see `passes`), so sharing the loop between threads shares no `&S` and only
// moves the exclusive use of `S` between threads: `S: Send` is what that needs.
unsafe impl<S: Send> Sync for DrainLoop<S> {}
// SAFETY: as for any owner of an `S`.
unsafe impl<S: Send> Send for DrainLoop<S> {}

impl<S> DrainLoop<S> {
    /// A loop with no work pending.
    ///
    /// # Examples
    ///
    /// ```
    /// let l = rs_impl::serial::DrainLoop::new(0u32);
    /// assert!(l.drain(|n| *n += 1));
    /// ```
    pub fn new(state: S) -> Self {
        DrainLoop {
            wip: AtomicUsize::new(0),
            state: UnsafeCell::new(state),
            #[cfg(test)]
            calls: AtomicUsize::new(0),
        }
    }

    /// Records one unit of work and, if nobody is draining, drains: runs `pass` with exclusive
    /// access to the state until a pass completes with no new work recorded meanwhile.
    ///
    /// Only the drainer's `pass` runs, for its own work and for the work every other caller
    /// recorded meanwhile, so **every caller must pass the same logic** (call one method of
    /// the owner, as in the module example).
    ///
    /// Returns `true` if this call was the drainer, `false` if it only recorded work for the
    /// current drainer (which will run at least one more pass after this call's increment).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::serial::DrainLoop;
    /// let l = DrainLoop::new(Vec::new());
    /// // A re-entrant call from inside a pass only records work; the outer drainer runs
    /// // another pass for it, so the recursion depth stays 1.
    /// let mut depth = 0;
    /// l.drain(|v: &mut Vec<u32>| {
    ///     depth += 1;
    ///     v.push(depth);
    /// });
    /// assert_eq!(depth, 1);
    /// ```
    #[inline]
    pub fn drain<F>(&self, pass: F) -> bool
    where
        F: FnMut(&mut S),
    {
        #[cfg(test)]
        self.calls.fetch_add(1, Ordering::Relaxed);
        // The hot re-entrant case (a request from inside on_next) is this one instruction.
        if self.wip.fetch_add(1, Ordering::AcqRel) != 0 {
            return false;
        }
        self.drain_as_drainer(pass);
        true
    }

    /// Hands `value` straight to the state and drains, if nobody is draining now; otherwise
    /// gives `value` back, recording nothing.
    ///
    /// For a producer that would otherwise queue every value under a lock for the drainer:
    /// when the loop is idle, `accept` puts the value into the drainer's state (no queue, no
    /// lock besides the state's own), then passes run as in [`drain`](Self::drain). On
    /// `Err(value)` the caller must **first** queue `value` where `pass` finds it, **then** call
    /// [`drain`](Self::drain) to record the work (in the other order, the drainer can finish
    /// between the two and the value waits for the next caller).
    ///
    /// If every pass takes everything queued, a value accepted here comes after every value that
    /// was queued and recorded before this call (no drainer was active, so every recorded
    /// value has been taken), and before every value queued after it: a producer whose calls
    /// are serial (such as a publisher's `on_next`) keeps its order.
    ///
    /// # Errors
    ///
    /// `value`, when another caller is draining (possibly this thread, re-entrantly).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::serial::DrainLoop;
    /// let l = DrainLoop::new(Vec::new());
    /// let mut seen = 0;
    /// assert!(l.try_drain_with(7, |v: &mut Vec<u32>, x| v.push(x), |v| seen = v.len()).is_ok());
    /// assert_eq!(seen, 1);
    /// ```
    pub fn try_drain_with<T, A, F>(&self, value: T, accept: A, pass: F) -> Result<(), T>
    where
        A: FnOnce(&mut S, T),
        F: FnMut(&mut S),
    {
        if self
            .wip
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(value);
        }
        self.with_state(|state| accept(state, value));
        self.passes(pass);
        Ok(())
    }

    /// The fast path of a producer that hands values to the drainer (RxJava's `tryEmit`):
    /// when nobody drains, `accept` runs with the state and, unless another caller recorded
    /// work meanwhile, the loop is left at once, **without a pass** (two read-modify-writes in
    /// all); work recorded meanwhile is drained before this returns, as in
    /// [`drain`](Self::drain). When somebody drains, `value` is given back and nothing is
    /// recorded: queue it where `pass` finds it, then call [`drain`](Self::drain).
    ///
    /// # Errors
    ///
    /// `value`, when another caller is draining (possibly this thread, re-entrantly).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::serial::DrainLoop;
    /// let l = DrainLoop::new(Vec::new());
    /// let mut passes = 0;
    /// assert!(l.try_fast(7, |v: &mut Vec<u32>, x| v.push(x), |_| passes += 1).is_ok());
    /// assert_eq!(passes, 0); // nothing else was recorded: no pass
    /// ```
    #[inline]
    pub fn try_fast<T, A, F>(&self, value: T, accept: A, pass: F) -> Result<(), T>
    where
        A: FnOnce(&mut S, T),
        F: FnMut(&mut S),
    {
        if self
            .wip
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(value);
        }
        self.with_state(|state| accept(state, value));
        let before = self.wip.fetch_sub(1, Ordering::AcqRel);
        if before != 1 {
            // Work recorded while `accept` ran: this caller is still the drainer (the counter
            // never reached 0), and owes a pass for each unit seen.
            self.passes_from(pass, before - 1);
        }
        Ok(())
    }

    /// The drainer's loop, out of line so that `drain`'s fast path inlines.
    #[inline(never)]
    fn drain_as_drainer<F>(&self, pass: F)
    where
        F: FnMut(&mut S),
    {
        self.passes(pass);
    }

    /// Runs `f` with the state. Only the drainer calls it.
    #[inline]
    fn with_state<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        self.state.with_mut(|state| {
            // SAFETY: (1) only a call that moved `wip` from 0 (`drain`'s increment or
            // `try_drain_with`'s exchange) gets here, and `wip` stays above 0 until the last
            // `fetch_sub` of its `passes`, so no other call reaches the state meanwhile: this is
            // the only reference to it. (2) The previous drainer's accesses happen-before ours:
            // its last `fetch_sub` (release) brought `wip` to 0 and our read-modify-write
            // (acquire) read that value or a later one in the counter's modification order (a
            // release sequence of read-modify-writes). (3) A re-entrant `drain` from inside
            // `pass` only increments `wip`; a re-entrant `try_drain_with` fails. (4) If `f`
            // panics, `wip` stays above 0 forever and the state is never touched again.
            f(unsafe { &mut *state })
        })
    }

    /// Runs passes until one completes with no new work recorded meanwhile (this drainer's
    /// own unit of work included); the state is then free for the next drainer.
    fn passes<F>(&self, pass: F)
    where
        F: FnMut(&mut S),
    {
        self.passes_from(pass, 1);
    }

    /// [`passes`](Self::passes) owing `missed` units of work (at least 1).
    fn passes_from<F>(&self, mut pass: F, mut missed: usize)
    where
        F: FnMut(&mut S),
    {
        loop {
            self.with_state(&mut pass);
            // Subtract exactly what this pass has seen; anything added meanwhile stays and
            // makes us loop (no lost wake-up).
            let before = self.wip.fetch_sub(missed, Ordering::AcqRel);
            missed = before - missed;
            if missed == 0 {
                break;
            }
        }
    }

    /// Whether a drainer is active right now (racy: for diagnostics and tests).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = rs_impl::serial::DrainLoop::new(());
    /// assert!(!l.is_draining());
    /// ```
    pub fn is_draining(&self) -> bool {
        self.wip.load(Ordering::Acquire) != 0
    }

    /// Calls of [`drain`](Self::drain) so far (unit tests only).
    #[cfg(test)]
    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }
}
