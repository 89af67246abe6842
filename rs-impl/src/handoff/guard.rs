//! Rule 2.4 for a consumer whose requests are made on another thread than the producer's
//! signals (the boundary's input side, the stream bridge's `poll_next`, the external
//! subscriber's requester): [`InFlight`].

use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Condvar, Mutex};
use crate::loom::thread::{self, ThreadId};

/// A request is in flight (between [`InFlight::begin`] and [`InFlight::end`]).
const REQUESTING: usize = 1;
/// A terminal signal was received: no request starts any more.
const ENDED: usize = 1 << 1;
/// A terminal signal waits for the request in flight to return.
const WAITING: usize = 1 << 2;

/// No request **starts** after a terminal signal was received, and a terminal signal that
/// arrives while a request runs on another thread waits until it returns (rule 2.4).
///
/// The request side marks itself with one read-modify-write of `state`, which also tells it
/// whether the end came first: the marks and the end are totally ordered in that word, so
/// either the request sees the end and is not made, or the end sees the request and waits
/// for it. Two read-modify-writes and one short lock per request (not per element); the end
/// waits only when a request is running on another thread at that moment. A terminal signal
/// delivered *inside* the request, on its own thread (a publisher that emits synchronously
/// from `request`), does not wait.
///
/// A publisher whose `request` blocks until a terminal signal it is delivering on another
/// thread has returned (it holds a lock across the signal that its `request` takes) would
/// deadlock with this; rule 3.4 asks `request` to return promptly (issue #12 made the same
/// trade for the island's input side).
///
/// Requests must be serial (rule 2.7: one in flight at a time), as every user's are: the
/// thread recorded for the same-thread exception is the one request's.
#[derive(Debug)]
pub(crate) struct InFlight {
    state: AtomicUsize,
    /// The thread of the request in flight, for the same-thread exception.
    caller: Mutex<Option<ThreadId>>,
    /// Signalled when a request returns while the end waits.
    returned: Condvar,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        InFlight {
            state: AtomicUsize::new(0),
            caller: Mutex::new(None),
            returned: Condvar::new(),
        }
    }

    /// Marks a request as started; `false` (and no mark) when a terminal signal was received.
    pub(crate) fn begin(&self) -> bool {
        *self.caller.lock() = Some(thread::current().id());
        if fault::active(Fault::RequestGuard) {
            return self.state.load(Ordering::Acquire) & ENDED == 0;
        }
        let prev = self.state.fetch_or(REQUESTING, Ordering::AcqRel);
        if prev & ENDED != 0 {
            // Not made: but a terminal signal may have seen the mark meanwhile and be waiting
            // for it to go, so it is taken back as a returning request is (a bare
            // `fetch_and` here left that signal waiting forever: found by the loom model
            // `island_input_request_races_upstream_completion`).
            self.unmark();
            return false;
        }
        true
    }

    /// The request returned: wakes a terminal signal waiting for it.
    pub(crate) fn end(&self) {
        if fault::active(Fault::RequestGuard) {
            return;
        }
        self.unmark();
    }

    /// Takes the request's mark back and wakes a terminal signal waiting for it.
    fn unmark(&self) {
        let prev = self
            .state
            .fetch_and(!(REQUESTING | WAITING), Ordering::AcqRel);
        if prev & WAITING != 0 {
            let _caller = self.caller.lock(); // the waiter holds it until it sleeps
            self.returned.notify_all();
        }
    }

    /// Runs `request` between [`begin`](Self::begin) and [`end`](Self::end); not at all (and
    /// `false`) once a terminal signal was received.
    #[inline]
    pub(crate) fn call(&self, request: impl FnOnce()) -> bool {
        if !self.begin() {
            return false;
        }
        request();
        self.end();
        true
    }

    /// A terminal signal was received: no request starts from now on, and one running on
    /// another thread is waited for.
    pub(crate) fn terminal(&self) {
        if fault::active(Fault::RequestGuard) {
            self.state.fetch_or(ENDED, Ordering::AcqRel);
            return;
        }
        if self.state.fetch_or(ENDED, Ordering::AcqRel) & REQUESTING == 0 {
            return;
        }
        let me = thread::current().id();
        let mut caller = self.caller.lock();
        if *caller == Some(me) {
            return; // delivered inside the request, on its own thread
        }
        while self.state.fetch_or(WAITING, Ordering::AcqRel) & REQUESTING != 0 {
            caller = self.returned.wait(caller);
        }
        drop(caller);
    }
}
