//! The [`Interpreter`]: initialisation, the event loop, finalisation.

use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use rs_api::Error;

use super::super::mailbox::Mailbox;
use super::super::port::{PortId, RunEnd};
use super::super::IslandError;
use super::core::{
    Core, Ctx, Stats, CHASE_LIMIT, IN_CLOSED, IN_FAILED, NO_EVENT, OUTLET_BIT, OUT_CLOSED, PULLING,
    PULL_END, PUSHING, PUSH_END,
};
use super::table::Stages;
use crate::loom::sync::Arc;
use crate::panics as report;

/// The interpreter of one island: runs its stages' handlers for the events on their ports.
///
/// See the [`island` module docs](crate::island) for the model. Single-threaded: it is driven by one
/// caller at a time (an [`Island`](crate::island::Island) on an executor, or a test), and is `Send`.
pub struct Interpreter {
    /// The stages; a finalised stage's slot holds [`Released`] (its state was dropped).
    pub(super) logics: Stages,
    pub(super) core: Core,
    pub(super) started: bool,
}

impl fmt::Debug for Interpreter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interpreter")
            .field("stages", &self.logics.len())
            .field("connections", &self.core.conns.len())
            .field("running", &self.core.running)
            .field("stats", &self.core.stats)
            .finish()
    }
}

impl Drop for Interpreter {
    fn drop(&mut self) {
        // An island dropped before it finished (its executor shut down): every live stage
        // still gets its post_stop, exactly once, and is dropped.
        for s in 0..self.logics.len() {
            if !self.core.finalised[s] {
                self.core.finalised[s] = true;
                let mut logic = self.logics.release(s);
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| logic.post_stop())) {
                    report::subscriber_panicked("post_stop", p);
                }
                report::drop_guarded(logic);
            }
        }
    }
}

/// Turns a handler's panic payload into the error that fails its stage.
pub(crate) fn panic_error(name: &'static str, payload: Box<dyn Any + Send>) -> Error {
    match payload.downcast::<IslandError>() {
        Ok(e) => Error::new(*e),
        Err(payload) => Error::new(IslandError::StagePanicked {
            stage: name,
            message: report::panic_message(&*payload),
        }),
    }
}

impl Interpreter {
    /// Runs every stage's `pre_start` (a panic there fails that stage) and finalises stages
    /// that start completed (zero ports). Called once; later calls do nothing.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](crate::island::GraphBuilder).
    pub fn init(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for s in 0..self.logics.len() as u32 {
            self.core.active = s;
            let logic = self.logics.get_mut(s as usize);
            let core = &mut self.core;
            let r = catch_unwind(AssertUnwindSafe(|| logic.pre_start(&mut Ctx { core })));
            if let Err(p) = r {
                let e = panic_error(self.core.names[s as usize], p);
                self.core.close_stage(s, Some(&e));
            }
            self.after_stage_has_run(s);
        }
    }

    /// Processes at most `budget` dequeued events (chased events are free) and returns the
    /// budget left: non-zero means the queue ran empty.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](crate::island::GraphBuilder).
    pub fn execute(&mut self, budget: u64) -> u64 {
        self.init();
        let mut remaining = budget;
        loop {
            let gate = self.core.gate;
            let r = catch_unwind(AssertUnwindSafe(|| {
                if gate {
                    self.run::<true>(&mut remaining)
                } else {
                    self.run::<false>(&mut remaining)
                }
            }));
            match r {
                Ok(()) => break,
                Err(p) => self.stage_panicked(p),
            }
        }
        self.core.chase_counter = 0;
        remaining
    }

    /// The hot loop (Pekko's `execute`).
    pub(super) fn run<const GATED: bool>(&mut self, remaining: &mut u64) {
        let fuzzing = self.core.fuzz.is_some();
        while *remaining > 0 {
            let Some(c) = self.core.dequeue() else { break };
            *remaining -= 1;
            self.core.stats.dequeued += 1;
            self.core.chase_counter = if fuzzing {
                0
            } else {
                CHASE_LIMIT.min(*remaining)
            };
            let granted = self.core.chase_counter;
            self.process_event(c);
            self.after_event::<GATED>();
            // One chase loop for both kinds: a push made while chasing a pull (the source
            // answering its downstream's pull) is chased too, instead of going back to the
            // queue to be dequeued and decoded (what Pekko's two loops do). The counter still
            // bounds the chase.
            loop {
                let c = self.core.chased_push;
                if c != NO_EVENT {
                    self.core.chased_push = NO_EVENT;
                    self.process_push(c);
                } else {
                    let c = self.core.chased_pull;
                    if c == NO_EVENT {
                        break;
                    }
                    self.core.chased_pull = NO_EVENT;
                    self.process_pull(c);
                }
                self.after_event::<GATED>();
            }
            // Chases granted by this event's counter, less those sent back to the queue
            // (counted down where chasing is aborted): no increment per chased event.
            self.core.stats.chased = self
                .core
                .stats
                .chased
                .wrapping_add(granted - self.core.chase_counter);
        }
    }

    /// After each event: the finalisation gate (or, ungated, the pre-#2986 check).
    #[inline(always)]
    pub(super) fn after_event<const GATED: bool>(&mut self) {
        if GATED {
            if self.core.pending_finalizations > 0 {
                self.finalise_pending();
            }
        } else {
            let active = self.core.active;
            self.after_stage_has_run(active);
        }
    }

    /// Ungated: looks at `stage` whatever the counter says, then at any cascade.
    pub(super) fn after_stage_has_run(&mut self, stage: u32) {
        let s = stage as usize;
        self.core.stats.finalisation_visits += 1;
        if s < self.logics.len() && self.core.shutdown[s] == 0 && !self.core.finalised[s] {
            self.finalise(stage);
        }
        if self.core.pending_finalizations > 0 {
            self.scan_pending();
        }
    }

    /// Gated slow path: the O(1) fast path for the active stage, then a scan on cascades.
    #[cold]
    #[inline(never)]
    pub(super) fn finalise_pending(&mut self) {
        let active = self.core.active;
        self.after_stage_has_run(active);
    }

    /// Scans every stage while finalisations are pending (post_stop may complete more).
    pub(super) fn scan_pending(&mut self) {
        while self.core.pending_finalizations > 0 {
            self.core.stats.finalisation_scans += 1;
            let mut found = false;
            for s in 0..self.logics.len() {
                self.core.stats.finalisation_visits += 1;
                if self.core.shutdown[s] == 0 && !self.core.finalised[s] {
                    self.finalise(s as u32);
                    found = true;
                }
            }
            if !found {
                debug_assert!(false, "pending finalisations without a completed stage");
                self.core.pending_finalizations = 0;
            }
        }
    }

    /// Finalises `stage`: exactly once, post_stop, state released.
    pub(super) fn finalise(&mut self, stage: u32) {
        let s = stage as usize;
        debug_assert!(!self.core.finalised[s] && self.core.shutdown[s] == 0);
        self.core.finalised[s] = true;
        self.core.pending_finalizations -= 1;
        self.core.running -= 1;
        self.core.stats.finalised += 1;
        let mut logic = self.logics.release(s);
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| logic.post_stop())) {
            report::subscriber_panicked("post_stop", p);
        }
        report::drop_guarded(logic);
        // Elements waiting at this stage's in-ports can no longer be grabbed.
        for i in self.core.ports_of(stage) {
            let p = self.core.port_list[i];
            if p & OUTLET_BIT == 0 {
                let clear = self.core.slot_ops[p as usize].clear;
                let slot = self.core.conns[p as usize].slot;
                report::drop_guarded(ClearSlot(clear, slot));
            }
        }
    }

    #[inline(always)]
    pub(super) fn process_push(&mut self, c: u32) {
        let conn = &mut self.core.conns[c as usize];
        conn.state ^= PUSH_END;
        self.core.active = conn.in_owner;
        let dispatch = conn.dispatch;
        // SAFETY: `dispatch` is the dispatch entry of one of this interpreter's connections,
        // written by its own stage table (`Stages::new`, in `build`).
        let stage = unsafe { self.logics.in_owner(dispatch) };
        stage.on_push(
            PortId(c),
            &mut Ctx {
                core: &mut self.core,
            },
        );
    }

    #[inline(always)]
    pub(super) fn process_pull(&mut self, c: u32) {
        let conn = &mut self.core.conns[c as usize];
        conn.state ^= PULL_END;
        self.core.active = conn.out_owner;
        let dispatch = conn.dispatch;
        // SAFETY: as in `process_push`.
        let stage = unsafe { self.logics.out_owner(dispatch) };
        stage.on_pull(
            PortId(c),
            &mut Ctx {
                core: &mut self.core,
            },
        );
    }

    /// Decodes and runs one dequeued event: PUSH and PULL inline (the hot cases), the rest
    /// out of line.
    #[inline(always)]
    pub(super) fn process_event(&mut self, c: u32) {
        let st = self.core.conns[c as usize].state;
        if st & (PUSHING | IN_CLOSED | OUT_CLOSED) == PUSHING {
            self.process_push(c);
        } else if st & (PULLING | OUT_CLOSED | IN_CLOSED) == PULLING {
            self.process_pull(c);
        } else {
            self.process_close(c, st);
        }
    }

    /// The rest of the decoder: CANCEL, COMPLETE or FAIL, push-then-close.
    #[inline(never)]
    pub(super) fn process_close(&mut self, c: u32, st: u32) {
        if st & (OUT_CLOSED | IN_CLOSED) == IN_CLOSED {
            // CANCEL
            let conn = &mut self.core.conns[c as usize];
            conn.state = st | OUT_CLOSED;
            let owner = conn.out_owner;
            self.core.active = owner;
            self.core.complete_connection(owner);
            self.logics.get_mut(owner as usize).on_downstream_finish(
                PortId(c),
                &mut Ctx {
                    core: &mut self.core,
                },
            );
        } else if st & (OUT_CLOSED | IN_CLOSED) == OUT_CLOSED {
            if st & PUSHING == 0 {
                // COMPLETE or FAIL
                let conn = &mut self.core.conns[c as usize];
                conn.state = st | IN_CLOSED;
                let owner = conn.in_owner;
                self.core.active = owner;
                self.core.complete_connection(owner);
                let error = if st & IN_FAILED != 0 {
                    let i = self.core.failures.iter().position(|(x, _)| *x == c);
                    i.map(|i| self.core.failures.swap_remove(i).1)
                } else {
                    None
                };
                let logic = self.logics.get_mut(owner as usize);
                let ctx = &mut Ctx {
                    core: &mut self.core,
                };
                match error {
                    Some(e) => logic.on_upstream_failure(PortId(c), e, ctx),
                    None => logic.on_upstream_finish(PortId(c), ctx),
                }
            } else {
                // Push then close: the push first, the close after it.
                self.process_push(c);
                self.core.enqueue(c);
            }
        }
    }

    /// A handler panicked: fail its stage, stop chasing (Pekko's `reportStageError`).
    pub(super) fn stage_panicked(&mut self, payload: Box<dyn Any + Send>) {
        let s = self.core.active;
        self.core.chase_counter = 0;
        if self.core.chased_push != NO_EVENT {
            let c = std::mem::replace(&mut self.core.chased_push, NO_EVENT);
            self.core.stats.chased = self.core.stats.chased.wrapping_sub(1);
            self.core.enqueue(c);
        }
        if self.core.chased_pull != NO_EVENT {
            let c = std::mem::replace(&mut self.core.chased_pull, NO_EVENT);
            self.core.stats.chased = self.core.stats.chased.wrapping_sub(1);
            self.core.enqueue(c);
        }
        if (s as usize) < self.logics.len() {
            let e = panic_error(self.core.names[s as usize], payload);
            self.core.close_stage(s, Some(&e));
            self.after_stage_has_run(s);
        }
    }

    /// Runs `stage`'s [`on_async_input`](crate::island::Stage::on_async_input) (events from outside the
    /// island), then the finalisation check for it; the events it causes are queued (never
    /// chased) for the next [`execute`](Self::execute).
    ///
    /// # Examples
    ///
    /// ```
    /// # let mut g = rs_impl::island::GraphBuilder::new();
    /// # let (o, i) = g.connection::<u8>();
    /// # g.add_stage(rs_impl::flow::IterSource::new(o, [1u8]));
    /// # let (sink, _seen) = rs_impl::island::stages::CollectSink::new(i);
    /// # g.add_stage(sink);
    /// let mut interpreter = g.build().unwrap();
    /// interpreter.init();
    /// interpreter.run_async_input(0); // IterSource ignores it
    /// assert_eq!(interpreter.stats().async_inputs, 1);
    /// ```
    pub fn run_async_input(&mut self, stage: u32) {
        self.init();
        let s = stage as usize;
        self.core.stats.async_inputs += 1;
        self.core.chase_counter = 0;
        self.core.active = stage;
        if s < self.logics.len() {
            let logic = self.logics.get_mut(s);
            let core = &mut self.core;
            let r = catch_unwind(AssertUnwindSafe(|| logic.on_async_input(&mut Ctx { core })));
            if let Err(p) = r {
                self.stage_panicked(p);
            }
        }
        if s < self.logics.len() {
            self.after_stage_has_run(stage);
        }
    }

    /// Runs [`Stage::on_park`](crate::island::Stage::on_park) of every stage that asked for it (with
    /// [`Ctx::call_on_park`]) and is not finalised, in the order they asked; the island does
    /// this when its run ends. A panic there fails that stage. Events the hooks cause are
    /// queued for the next [`execute`](Self::execute) (an island runs again instead of parking
    /// when there are any: see [`is_suspended`](Self::is_suspended)).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut i = rs_impl::island::GraphBuilder::new().build().unwrap();
    /// i.run_park_hooks(rs_impl::island::RunEnd::Park); // no stage asked: nothing runs
    /// ```
    pub fn run_park_hooks(&mut self, end: RunEnd) {
        self.init();
        let mut i = 0;
        while i < self.core.park_hooks.len() {
            let stage = self.core.park_hooks[i];
            i += 1;
            let s = stage as usize;
            if self.core.finalised[s] {
                continue;
            }
            self.core.chase_counter = 0;
            self.core.active = stage;
            let logic = self.logics.get_mut(s);
            let core = &mut self.core;
            let r = catch_unwind(AssertUnwindSafe(|| logic.on_park(end, &mut Ctx { core })));
            if let Err(p) = r {
                self.stage_panicked(p);
            }
            self.after_stage_has_run(stage);
        }
        // Finalised stages leave the list (rarely: once each).
        if self
            .core
            .park_hooks
            .iter()
            .any(|&s| self.core.finalised[s as usize])
        {
            let finalised = &self.core.finalised;
            self.core.park_hooks.retain(|&s| !finalised[s as usize]);
        }
    }

    /// Whether every stage has been finalised.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`](crate::island::GraphBuilder).
    pub fn is_completed(&self) -> bool {
        self.core.running == 0
    }

    /// Whether events are waiting (the last [`execute`](Self::execute) ran out of budget).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, i) = g.connection::<u32>();
    /// g.add_stage(rs_impl::flow::IterSource::new(o, 0..100u32));
    /// let (sink, _) = rs_impl::island::stages::CollectSink::new(i);
    /// g.add_stage(sink);
    /// let mut interpreter = g.build().unwrap();
    /// assert_eq!(interpreter.execute(3), 0);
    /// assert!(interpreter.is_suspended());
    /// ```
    pub fn is_suspended(&self) -> bool {
        self.core.head != self.core.tail
    }

    /// Stages not yet finalised.
    ///
    /// # Examples
    ///
    /// ```
    /// let g = rs_impl::island::GraphBuilder::new();
    /// assert_eq!(g.build().unwrap().running_stages(), 0);
    /// ```
    pub fn running_stages(&self) -> u32 {
        self.core.running
    }

    /// Whether stage `stage` has been finalised (its state released).
    ///
    /// # Examples
    ///
    /// See the stress tests in `rs-impl/tests/island.rs`.
    pub fn is_finalised(&self, stage: u32) -> bool {
        self.core.finalised[stage as usize]
    }

    /// The counters (events, chases, finalisation visits).
    ///
    /// # Examples
    ///
    /// See [`Interpreter::run_async_input`].
    pub fn stats(&self) -> Stats {
        self.core.stats
    }

    /// Finalisations pending right now (0 between events when nothing is completing).
    ///
    /// # Examples
    ///
    /// ```
    /// let g = rs_impl::island::GraphBuilder::new();
    /// assert_eq!(g.build().unwrap().pending_finalisations(), 0);
    /// ```
    pub fn pending_finalisations(&self) -> u32 {
        self.core.pending_finalizations
    }

    /// Turns the pending-finalisation gate on (the default) or off. Off, every event checks
    /// its stage for completion, as Pekko did before #2986: the same results, more work per
    /// event. For the benchmark that measures the gate.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut i = rs_impl::island::GraphBuilder::new().build().unwrap();
    /// i.set_finalisation_gate(false);
    /// ```
    #[doc(hidden)]
    pub fn set_finalisation_gate(&mut self, enabled: bool) {
        self.core.gate = enabled;
    }

    /// Fuzzing mode: with `Some(seed)`, events are dequeued in a pseudo-random order and
    /// nothing is chased; `None` restores the normal mode.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut i = rs_impl::island::GraphBuilder::new().build().unwrap();
    /// i.set_fuzzing(Some(42));
    /// ```
    #[doc(hidden)]
    pub fn set_fuzzing(&mut self, seed: Option<u64>) {
        self.core.fuzz = seed.map(|s| s | 1);
    }

    pub(crate) fn mailbox(&self) -> &Arc<Mailbox> {
        &self.core.mailbox
    }
}

/// Clears one slot when dropped (so `drop_guarded` can contain a panicking element drop).
pub(super) struct ClearSlot(pub(super) unsafe fn(NonNull<()>), pub(super) NonNull<()>);

impl Drop for ClearSlot {
    fn drop(&mut self) {
        // SAFETY: built only in `Interpreter::finalise` from a connection's slot and its own
        // type's `clear`, with `&mut` access to the interpreter (no reference to the slot).
        unsafe { (self.0)(self.1) }
    }
}
