//! The stage that runs one fused segment: an [`Entry`] driving an [`Exit`] (whose operators
//! are fused into it), as one interpreter stage.
//!
//! With a ring or iterator entry, the segment moves a whole batch per handler call: it takes
//! an element from its entry and pushes it into the exit (the operators run as direct calls),
//! while the exit has room and the entry has elements, with no interpreter event per element.
//! The loop is bounded (a ring's worth, or [`ITER_BATCH`](super::entry::ITER_BATCH), per
//! call; then the segment posts to itself), so an island still yields to its executor after
//! its budget. With a port entry it runs one element per push of upstream.
//!
//! **Before parking** with room downstream and an empty ring whose producing island is running
//! on another thread, the segment lingers a few microseconds for the next flush (see
//! [`crate::boundary`]).
//!
//! **Termination across the segment.** The entry's completion is acted on once the ring is
//! drained (deferred); an upstream failure as soon as nothing more can be delivered now: at
//! once when the exit knows its demand exactly (a boundary, a subscriber), or, with an
//! out-port exit, when the island is about to park (after every element downstream pulled in
//! that run) — buffered input beyond that is dropped (eager). The exit's cancel cancels the
//! entry (and drops what is buffered). Output an operator holds back (a fold's result, an
//! operator that emits several elements per element) is delivered as room appears, and the
//! exit ends after it.

use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rs_api::Error;

use super::entry::{Entry, Pumped, Stall};
use super::exit::{Closing, Exit, Step};
use crate::island::{panic_error, Ctx, Notifier, PortId, Ports, RunEnd, Stage};

/// [`Segment::life`]: no more input (the exit delivers what it holds).
const ENDING: u8 = 1;
/// [`Segment::life`]: finished (every port closed).
const DONE: u8 = 2;

/// The stage of one segment (see the module docs).
pub(crate) struct Segment<E, X> {
    entry: E,
    exit: X,
    /// This stage's own notifier (to come back after a bounded loop).
    me: Option<Notifier>,
    /// An upstream failure waits for the island's park (out-port exit only).
    failing: bool,
    /// Where the segment is in its life, two flags in one byte (so that the hot handlers ask
    /// "still taking input?" with one test): [`ENDING`] — no more input: the entry ended or
    /// was cancelled; the exit delivers what it holds — and [`DONE`] — finished: every port
    /// closed, the stage lets go.
    life: u8,
    name: &'static str,
}

impl<E, X> fmt::Debug for Segment<E, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segment")
            .field("ending", &(self.life & ENDING != 0))
            .field("done", &(self.life & DONE != 0))
            .finish_non_exhaustive()
    }
}

impl<E, X> Segment<E, X>
where
    E: Entry,
    X: Exit<E::Item>,
{
    pub(crate) fn new(entry: E, exit: X) -> Self {
        Segment {
            entry,
            exit,
            me: None,
            failing: false,
            life: 0,
            name: "fused operators",
        }
    }

    /// Finished: every port closed.
    #[inline(always)]
    fn done(&self) -> bool {
        self.life & DONE != 0
    }

    /// Neither ending nor finished: still taking input (one test of both flags).
    #[inline(always)]
    fn live(&self) -> bool {
        self.life == 0
    }

    /// Names the stage (for errors and diagnostics).
    pub(crate) fn named(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Runs `f` on the segment; a panic (an operator's, the iterator's, a subscriber's escaped
    /// guard) fails the segment.
    #[inline]
    fn guarded<R>(
        &mut self,
        ctx: &mut Ctx<'_>,
        f: impl FnOnce(&mut Self, &mut Ctx<'_>) -> R,
    ) -> Option<R> {
        match catch_unwind(AssertUnwindSafe(|| f(self, ctx))) {
            Ok(r) => Some(r),
            Err(p) => {
                self.panicked(p, ctx);
                None
            }
        }
    }

    /// Moves elements while the exit has room and the entry has them (at most one batch per
    /// call; then it comes back through its own mailbox).
    fn drive(&mut self, ctx: &mut Ctx<'_>) {
        if !self.live() {
            if !self.done() {
                self.drain(ctx);
            }
            return;
        }
        // Downstream's cancel (or bad request) first: it may have come while there is room.
        if let Some(c) = self.exit.closed() {
            self.exit_closed(c, ctx);
            return;
        }
        if self.exit.has_pending() {
            match self.guarded(ctx, |s, ctx| s.exit.resume(ctx)) {
                None => return,
                Some(Step::Stop) => {
                    self.input_over(ctx);
                    return;
                }
                Some(Step::More) => {}
            }
        }
        let mut budget = self.entry.batch();
        loop {
            let room = self.exit.room(ctx);
            if room == 0 {
                self.stalled(ctx);
                return;
            }
            if let Some(inlet) = self.entry.port() {
                if !ctx.has_been_pulled(inlet) && !ctx.is_inlet_closed(inlet) {
                    ctx.pull(inlet);
                }
                return;
            }
            if budget == 0 {
                self.come_back(ctx);
                return;
            }
            let n = room.min(budget);
            budget -= n;
            let Some(pumped) = self.guarded(ctx, |s, ctx| s.entry.pump(ctx, &mut s.exit, n)) else {
                return;
            };
            match pumped {
                Pumped::Moved => {}
                Pumped::Empty => return,
                Pumped::Complete => {
                    self.complete(ctx);
                    return;
                }
                Pumped::Failed => {
                    self.upstream_failed(ctx);
                    return;
                }
                Pumped::Stopped => {
                    self.input_over(ctx);
                    return;
                }
            }
        }
    }

    /// The exit has no room: it may have closed; an upstream failure is acted on (nothing more
    /// can be delivered now: eager), and so is a completion once the entry is drained (no
    /// demand is needed for it).
    fn stalled(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(c) = self.exit.closed() {
            self.exit_closed(c, ctx);
            return;
        }
        if self.exit.has_pending() {
            return; // what is held goes first; the entry's end waits for it
        }
        match self.entry.stalled() {
            Stall::Wait => {}
            Stall::Complete => self.complete(ctx),
            Stall::Failed => {
                if self.exit.port_id().is_some() {
                    self.failing = true;
                } else {
                    self.upstream_failed(ctx);
                }
            }
        }
    }

    /// The exit stopped taking input: the entry is cancelled; the exit ends after what it
    /// holds.
    fn input_over(&mut self, ctx: &mut Ctx<'_>) {
        self.entry.cancel();
        self.life |= ENDING;
        self.drain(ctx);
    }

    /// Ending: delivers what the exit holds, and finishes once nothing is.
    fn drain(&mut self, ctx: &mut Ctx<'_>) {
        if self.exit.has_pending() {
            if let Some(c) = self.exit.closed() {
                self.exit_closed(c, ctx);
                return;
            }
            if self.guarded(ctx, |s, ctx| s.exit.resume(ctx)).is_none() {
                return;
            }
        }
        if !self.exit.has_pending() {
            self.finish(None, ctx);
        }
    }

    /// Whether the exit ends in an out-port that has no room (a push just filled it): the
    /// chase slot answers first ([`Ctx::push_chased`]: the push is waiting there, so the port
    /// is full, which `room` would find after a second look at the port), `room` otherwise.
    #[inline(always)]
    fn port_full(&mut self, ctx: &mut Ctx<'_>) -> bool {
        match self.exit.port_id() {
            Some(id) => ctx.push_chased(id) || self.exit.room(ctx) == 0,
            None => false,
        }
    }

    /// Posts to itself: the loop goes on in the island's next round (counted in its budget).
    fn come_back(&mut self, ctx: &mut Ctx<'_>) {
        self.me.get_or_insert_with(|| ctx.notifier()).notify();
    }

    /// Completes the exit (after every element) and finishes once nothing is held.
    fn complete(&mut self, ctx: &mut Ctx<'_>) {
        self.entry.close();
        self.life |= ENDING;
        if self.guarded(ctx, |s, ctx| s.exit.complete(ctx)).is_none() {
            return;
        }
        self.drain(ctx);
    }

    /// The entry's upstream failed: buffered input is dropped, the exit fails.
    fn upstream_failed(&mut self, ctx: &mut Ctx<'_>) {
        let error = self.entry.error();
        self.entry.close();
        self.fail(error, ctx);
    }

    /// Fails the exit (or, for an operator that recovers, completes it after what it emits).
    fn fail(&mut self, error: Error, ctx: &mut Ctx<'_>) {
        self.life |= ENDING;
        if self
            .guarded(ctx, |s, ctx| s.exit.fail(ctx, error))
            .is_none()
        {
            return;
        }
        self.drain(ctx);
    }

    /// An operator (or the source iterator) panicked: the entry is cancelled and the exit
    /// fails with [`IslandError::StagePanicked`](crate::island::IslandError::StagePanicked),
    /// past every operator (none of them gets a chance to recover from it).
    fn panicked(&mut self, payload: Box<dyn Any + Send>, ctx: &mut Ctx<'_>) {
        let error = panic_error(self.name, payload);
        self.entry.cancel();
        if self.exit.port_id().is_some() {
            self.finish(Some(error), ctx);
            return;
        }
        // A subscriber exit guards its own calls; anything else that panics here is let go.
        if catch_unwind(AssertUnwindSafe(|| self.exit.abort(ctx, error))).is_err() {
            self.exit.stop();
        }
        self.finish(None, ctx);
    }

    /// The exit closed: the entry is cancelled.
    fn exit_closed(&mut self, closing: Closing, ctx: &mut Ctx<'_>) {
        self.entry.cancel();
        match closing {
            Closing::Cancelled => self.exit.stop(),
            Closing::Failed(error) => {
                let _ = self.guarded(ctx, |s, ctx| s.exit.fail(ctx, error));
            }
        }
        self.finish(None, ctx);
    }

    /// Closes every port (failing the out-port with `error`) and lets the stage be finalised.
    fn finish(&mut self, error: Option<Error>, ctx: &mut Ctx<'_>) {
        if self.done() {
            return;
        }
        self.life |= DONE;
        match error {
            Some(e) => ctx.fail_stage(e),
            None => ctx.complete_stage(),
        }
        ctx.set_keep_going(false);
    }
}

impl<E, X> Stage for Segment<E, X>
where
    E: Entry,
    X: Exit<E::Item>,
{
    fn ports(&self, ports: &mut Ports) {
        if let Some(inlet) = self.entry.port() {
            ports.inlet(inlet);
        }
        if let Some(id) = self.exit.port_id() {
            ports.outlet_id(id);
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        // Alive until it finishes, whatever its ports (it may have none).
        ctx.set_keep_going(true);
        ctx.call_on_park();
        match self.guarded(ctx, |s, ctx| s.exit.start(ctx)) {
            None => return,
            Some(Step::Stop) => {
                self.input_over(ctx);
                return;
            }
            Some(Step::More) => {}
        }
        if let Err(error) = self.entry.start(ctx) {
            self.entry.cancel();
            self.fail(error, ctx);
            return;
        }
        // The first moves happen on the island, not on the thread that starts it.
        self.come_back(ctx);
    }

    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let Some(inlet) = self.entry.port() else {
            return;
        };
        let x = ctx.grab(inlet);
        if !self.live() {
            return;
        }
        match self.guarded(ctx, |s, ctx| s.exit.push(ctx, x)) {
            None => {}
            // Between two ports, a push that filled the out-port leaves nothing to do until
            // downstream pulls (`on_pull` drives then): the element per hop costs one push
            // and one pull, as a hand-written stage's does. Anything else — room left (an
            // operator that emitted nothing), or an exit that can close by itself — drives.
            Some(Step::More) if self.port_full(ctx) => {}
            Some(Step::More) => self.drive(ctx),
            Some(Step::Stop) => self.input_over(ctx),
        }
    }

    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if self.exit.port_id().is_some() && self.live() && !self.exit.has_pending() {
            if let Some(inlet) = self.entry.port() {
                // Between two ports with nothing held back, downstream's pull goes upstream
                // as it is (what `drive` would do, without its batch loop).
                ctx.pull_if_idle(inlet);
                return;
            }
            // A source (an iterator, a ring) into an out-port: one pull asks for one element,
            // so one pump of one, without `drive`'s batch loop (an out-port has no room after
            // a push; the stall check runs as in `drive`, so an entry that ended with that
            // element still completes without another pull, unless the entry's pump reports
            // its end itself). Anything else — an operator that
            // emitted nothing (room left) — goes on in `drive`.
            if self.exit.room(ctx) > 0 {
                match self.guarded(ctx, |s, ctx| s.entry.pump_one(ctx, &mut s.exit)) {
                    None => return,
                    Some(Pumped::Moved) if self.port_full(ctx) => {
                        // An entry whose pump reports its end has not ended after `Moved`,
                        // and an exit into a port never closes by itself: nothing to look at.
                        if !E::PUMP_REPORTS_END {
                            self.stalled(ctx);
                        }
                        return;
                    }
                    Some(Pumped::Moved) => {}
                    Some(Pumped::Empty) => return,
                    Some(Pumped::Complete) => {
                        self.complete(ctx);
                        return;
                    }
                    Some(Pumped::Failed) => {
                        self.upstream_failed(ctx);
                        return;
                    }
                    Some(Pumped::Stopped) => {
                        self.input_over(ctx);
                        return;
                    }
                }
            }
        }
        self.drive(ctx);
    }

    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        self.entry.refresh();
        self.drive(ctx);
    }

    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if self.live() {
            self.complete(ctx);
        }
    }

    fn on_upstream_failure(&mut self, _: PortId, error: Error, ctx: &mut Ctx<'_>) {
        if self.live() {
            self.fail(error, ctx);
        }
    }

    fn on_downstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        if !self.done() {
            self.entry.cancel();
            self.exit.stop();
            self.finish(None, ctx);
        }
    }

    fn on_park(&mut self, end: RunEnd, ctx: &mut Ctx<'_>) {
        if end == RunEnd::Park && self.live() && !self.failing {
            let wants = self.exit.room(ctx) > 0;
            if wants && self.entry.linger() {
                self.drive(ctx);
            }
        }
        self.exit.on_park(end);
        if self.failing && end == RunEnd::Park && !self.done() {
            self.failing = false;
            self.upstream_failed(ctx);
        }
    }

    fn post_stop(&mut self) {
        if !self.done() {
            self.life |= DONE;
            self.entry.cancel();
            self.exit.stop();
        }
    }
}
