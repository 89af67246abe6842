//! The lanes' ends: [`LaneExit`], the last exit of each lane (it names the lane in the lane's
//! failure), and [`JoinEntry`], the merging island's entry: the consumer ends of the lanes'
//! output rings, read round-robin in arrival order.

use std::fmt;

use rs_api::Error;

use super::dispatch::Control;
use super::LanesError;
use crate::flow::{Closing, Exit, RingIn, Step};
use crate::handoff::Polled;
use crate::island::{Ctx, RunEnd};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::Arc;

/// The exit a lane flow ends in, around the real one (a ring into the merging island, or the
/// lane's subscriber): a failure of the lane is recorded with the lane's index and wrapped
/// in [`LanesError::LaneFailed`] (see [`Control::lane_error`]).
pub(crate) struct LaneExit<X> {
    lane: usize,
    next: X,
    control: Arc<Control>,
}

impl<X> fmt::Debug for LaneExit<X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaneExit")
            .field("lane", &self.lane)
            .finish_non_exhaustive()
    }
}

impl<X> LaneExit<X> {
    pub(crate) fn new(lane: usize, next: X, control: Arc<Control>) -> Self {
        LaneExit {
            lane,
            next,
            control,
        }
    }
}

impl<U, X: Exit<U>> Exit<U> for LaneExit<X> {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.next.start(cx)
    }
    #[inline(always)]
    fn room(&mut self, cx: &Ctx<'_>) -> usize {
        self.next.room(cx)
    }
    #[inline(always)]
    fn push(&mut self, cx: &mut Ctx<'_>, item: U) -> Step {
        self.next.push(cx, item)
    }
    fn complete(&mut self, cx: &mut Ctx<'_>) {
        self.next.complete(cx)
    }
    fn fail(&mut self, cx: &mut Ctx<'_>, error: Error) {
        let e = self.control.lane_error(self.lane, error);
        self.next.fail(cx, e)
    }
    #[inline(always)]
    fn has_pending(&self) -> bool {
        self.next.has_pending()
    }
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.next.resume(cx)
    }
    fn closed(&mut self) -> Option<Closing> {
        self.next.closed()
    }
    fn port_id(&self) -> Option<u32> {
        self.next.port_id()
    }
    fn abort(&mut self, cx: &mut Ctx<'_>, error: Error) {
        let e = self.control.lane_error(self.lane, error);
        self.next.abort(cx, e)
    }
    fn is_boundary(&self) -> bool {
        self.next.is_boundary()
    }
    fn on_park(&mut self, end: RunEnd) {
        self.next.on_park(end)
    }
    fn stop(&mut self) {
        self.next.stop()
    }
}

/// The merging island's entry: one ring per lane, read round-robin (each ring until it is
/// empty or the call's quota is used), so elements leave in the order they arrive from the
/// lanes; complete once every lane completed, failed as soon as one lane failed.
pub(crate) struct JoinEntry<U> {
    rings: Vec<RingIn<U>>,
    /// Lanes whose ring completed and drained.
    done: Vec<bool>,
    live: usize,
    next: usize,
    failed: Option<usize>,
    control: Arc<Control>,
}

impl<U> fmt::Debug for JoinEntry<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinEntry")
            .field("lanes", &self.rings.len())
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

impl<U: Send + 'static> JoinEntry<U> {
    pub(crate) fn new(rings: Vec<RingIn<U>>, control: Arc<Control>) -> Self {
        let n = rings.len();
        JoinEntry {
            rings,
            done: vec![false; n],
            live: n,
            next: 0,
            failed: None,
            control,
        }
    }

    #[inline]
    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.rings.len() {
            self.next = 0;
        }
    }
}

impl<U: Send + 'static> crate::flow::Entry for JoinEntry<U> {
    type Item = U;

    fn start(&mut self, cx: &mut Ctx<'_>) -> Result<(), Error> {
        for r in &mut self.rings {
            r.start(cx)?;
        }
        Ok(())
    }

    fn batch(&self) -> usize {
        self.rings.iter().map(|r| r.size()).sum::<usize>().max(1)
    }

    #[inline]
    fn pump<X: Exit<U>>(
        &mut self,
        cx: &mut Ctx<'_>,
        exit: &mut X,
        n: usize,
    ) -> crate::flow::Pumped {
        use crate::flow::Pumped;
        let mut moved = 0;
        let mut idle = 0;
        while moved < n {
            if self.live == 0 {
                return Pumped::Complete;
            }
            let k = self.next;
            if self.done[k] {
                self.advance();
                continue;
            }
            match self.rings[k].poll() {
                Polled::Item(x) => {
                    moved += 1;
                    idle = 0;
                    if exit.push(cx, x) == Step::Stop {
                        return Pumped::Stopped;
                    }
                }
                Polled::Empty => {
                    idle += 1;
                    self.advance();
                    if idle >= self.live {
                        return Pumped::Empty; // every live ring parked
                    }
                }
                Polled::Complete => {
                    if fault::active(Fault::LanesCompleteOnFirstLane) {
                        return Pumped::Complete;
                    }
                    self.done[k] = true;
                    self.live -= 1;
                    self.rings[k].close();
                    self.advance();
                }
                Polled::Failed => {
                    self.failed = Some(k);
                    return Pumped::Failed;
                }
            }
        }
        if self.live == 0 {
            return Pumped::Complete;
        }
        Pumped::Moved
    }

    fn stalled(&mut self) -> crate::flow::Stall {
        use crate::flow::Stall;
        let mut all = true;
        for (k, r) in self.rings.iter_mut().enumerate() {
            if self.done[k] {
                continue;
            }
            if r.failed() {
                self.failed = Some(k);
                return Stall::Failed;
            }
            all &= r.at_end();
        }
        if all {
            Stall::Complete
        } else {
            Stall::Wait
        }
    }

    fn refresh(&mut self) {
        for r in &mut self.rings {
            r.refresh();
        }
    }

    fn linger(&mut self) -> bool {
        for (k, r) in self.rings.iter_mut().enumerate() {
            if !self.done[k] && r.linger() {
                return true;
            }
        }
        false
    }

    fn cancel(&mut self) {
        for r in &mut self.rings {
            r.cancel();
        }
    }

    fn close(&mut self) {
        for r in &mut self.rings {
            r.close();
        }
    }

    /// The failed lane's error: the upstream's error as it is, a lane failure as its lane
    /// exit named it; a lane island that went away without a signal is named here.
    fn error(&mut self) -> Error {
        let lanes = self.rings.len();
        let Some(k) = self.failed else {
            return Error::msg("a lane failed");
        };
        let e = self.rings[k].error();
        if e.is::<LanesError>() || self.control.upstream_failed() {
            e
        } else {
            Error::new(LanesError::LaneFailed {
                lane: k,
                lanes,
                error: e,
            })
        }
    }
}
