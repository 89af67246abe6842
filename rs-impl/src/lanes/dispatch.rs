//! The dispatcher: the upstream island's exit, writing each element into its lane's bounded
//! ring ([`Dispatch`]); and what one materialisation's lanes share ([`Control`]): which lane
//! failed first, and the dispatcher's notifier.

use std::fmt;
use std::sync::Arc as StdArc;

use rs_api::Error;

use super::key::{lane_of, LaneKey};
use super::{Broadcast, LanesError};
use crate::flow::{Closing, Exit, RingOut, Step};
use crate::island::{Ctx, Notifier, RunEnd};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::{Arc, Mutex};

/// What the islands of one materialisation of keyed lanes share.
pub(crate) struct Control {
    lanes: usize,
    /// The upstream failed: the lanes' failures that follow are the upstream's error, passed
    /// on as it is.
    upstream_failed: AtomicBool,
    /// A lane failed (set once, by the first): the dispatcher stops.
    failed: AtomicBool,
    /// The first lane failure: the lane and its error (wrapped in [`LanesError::LaneFailed`]).
    failure: Mutex<Option<(usize, Error)>>,
    dispatcher: Mutex<Option<Notifier>>,
}

impl fmt::Debug for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Control")
            .field("lanes", &self.lanes)
            .field("failed", &self.failed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Control {
    pub(crate) fn new(lanes: usize) -> Arc<Self> {
        Arc::new(Control {
            lanes,
            upstream_failed: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            dispatcher: Mutex::new(None),
        })
    }

    /// Lane `lane` ends with `error`: the first lane failure (not the upstream's error passed
    /// through, not another lane's failure the dispatcher passed on) is recorded, wrapped in
    /// [`LanesError::LaneFailed`], and the dispatcher told; returns the error the lane's exit
    /// fails with.
    pub(crate) fn lane_error(&self, lane: usize, error: Error) -> Error {
        if self.upstream_failed.load(Ordering::Acquire) {
            return error;
        }
        let wrapped = {
            let mut failure = self.failure.lock();
            if failure.is_some() {
                return error; // a lane failed first: this is its error, passed on
            }
            let wrapped = Error::new(LanesError::LaneFailed {
                lane,
                lanes: self.lanes,
                error,
            });
            *failure = Some((lane, wrapped.clone()));
            wrapped
        };
        self.failed.store(true, Ordering::Release);
        let dispatcher = self.dispatcher.lock().clone();
        if let Some(n) = dispatcher {
            n.notify();
        }
        wrapped
    }

    /// Whether the upstream failed (its error went to every lane).
    pub(crate) fn upstream_failed(&self) -> bool {
        self.upstream_failed.load(Ordering::Acquire)
    }

    /// The first lane failure, if a lane failed.
    pub(crate) fn failure(&self) -> Option<(usize, Error)> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        self.failure.lock().clone()
    }
}

/// An element waiting for room in its lane (head-of-line: nothing else moves meanwhile).
enum Pending<T> {
    /// For one lane.
    One(usize, T),
    /// A broadcast element, delivered to the lanes before this one already.
    All(usize, T),
}

/// The upstream island's exit: each element into the ring of its lane (see the module docs
/// of [`crate::lanes`]).
pub(crate) struct Dispatch<T, F, Q> {
    lanes: Box<[RingOut<T>]>,
    key: StdArc<F>,
    broadcast: Option<Broadcast<T>>,
    pending: Option<Pending<T>>,
    /// The upstream completed: the lanes complete once nothing is pending.
    completing: bool,
    ended: bool,
    control: Arc<Control>,
    _q: std::marker::PhantomData<fn() -> Q>,
}

impl<T, F, Q> fmt::Debug for Dispatch<T, F, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatch")
            .field("lanes", &self.lanes.len())
            .field("pending", &self.pending.is_some())
            .field("completing", &self.completing)
            .finish_non_exhaustive()
    }
}

impl<T, F, Q> Dispatch<T, F, Q>
where
    T: Send + 'static,
    F: Fn(&T) -> Q + Send + Sync + 'static,
    Q: LaneKey + 'static,
{
    pub(crate) fn new(
        lanes: Vec<RingOut<T>>,
        key: StdArc<F>,
        broadcast: Option<Broadcast<T>>,
        control: Arc<Control>,
    ) -> Self {
        Dispatch {
            lanes: lanes.into_boxed_slice(),
            key,
            broadcast,
            pending: None,
            completing: false,
            ended: false,
            control,
            _q: std::marker::PhantomData,
        }
    }

    /// Writes `x` into lane `lane`; keeps it pending when the lane is full. An element for a
    /// lane whose reader left is dropped.
    #[inline]
    fn send(&mut self, lane: usize, x: T) {
        let out = &mut self.lanes[lane];
        if let Err(x) = out.push(x) {
            if out.closed() || fault::active(Fault::LaneFullDrops) {
                drop(x);
            } else {
                self.pending = Some(Pending::One(lane, x));
            }
        }
    }

    /// Writes a broadcast element into every lane from `from` on, a copy each (the last
    /// lane takes the element itself); keeps it pending at the first full lane.
    fn broadcast_from(&mut self, from: usize, x: T) {
        let n = self.lanes.len();
        let copy = self.broadcast.as_ref().map(|b| b.copy).expect("broadcast");
        for lane in from..n {
            let out = &mut self.lanes[lane];
            if out.closed() {
                continue;
            }
            if out.room() == 0 {
                self.pending = Some(Pending::All(lane, x));
                return;
            }
            let item = if lane + 1 == n {
                return self.send(lane, x);
            } else {
                copy(&x)
            };
            if let Err(item) = out.push(item) {
                drop(item); // room was checked: only a closed ring refuses
            }
        }
    }

    fn complete_all(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        for out in self.lanes.iter_mut() {
            out.complete();
        }
    }

    fn fail_all(&mut self, error: Error) {
        self.pending = None;
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.control.upstream_failed.store(true, Ordering::Release);
        for out in self.lanes.iter_mut() {
            out.fail(error.clone());
        }
    }
}

impl<T, F, Q> Exit<T> for Dispatch<T, F, Q>
where
    T: Send + 'static,
    F: Fn(&T) -> Q + Send + Sync + 'static,
    Q: LaneKey + 'static,
{
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        for out in self.lanes.iter_mut() {
            out.start(cx);
        }
        *self.control.dispatcher.lock() = Some(cx.notifier());
        Step::More
    }

    /// The fewest free slots of any lane (every element fits then, whatever its lane); at
    /// least 1 while nothing is pending: that element goes, or waits for its lane.
    #[inline]
    fn room(&mut self, _: &Ctx<'_>) -> usize {
        if self.pending.is_some() || self.completing || self.ended {
            return 0;
        }
        let mut room = usize::MAX;
        for out in self.lanes.iter_mut() {
            let r = out.room();
            if r == 0 && out.closed() {
                continue; // a lane that left takes (and drops) anything
            }
            room = room.min(r);
        }
        room.max(1)
    }

    #[inline]
    fn push(&mut self, _: &mut Ctx<'_>, x: T) -> Step {
        if let Some(b) = &self.broadcast {
            if (b.predicate)(&x) {
                self.broadcast_from(0, x);
                return Step::More;
            }
        }
        let lane = lane_of((self.key)(&x).lane_hash(), self.lanes.len());
        self.send(lane, x);
        Step::More
    }

    fn complete(&mut self, _: &mut Ctx<'_>) {
        self.completing = true;
        if self.pending.is_none() {
            self.complete_all();
        }
    }

    fn fail(&mut self, _: &mut Ctx<'_>, error: Error) {
        self.fail_all(error);
    }

    fn has_pending(&self) -> bool {
        self.pending.is_some()
    }

    fn resume(&mut self, _: &mut Ctx<'_>) -> Step {
        match self.pending.take() {
            Some(Pending::One(lane, x)) => self.send(lane, x),
            Some(Pending::All(lane, x)) => self.broadcast_from(lane, x),
            None => {}
        }
        if self.completing {
            if self.pending.is_none() {
                self.complete_all();
            }
            return Step::Stop;
        }
        Step::More
    }

    /// A lane failed, or every lane's reader left.
    fn closed(&mut self) -> Option<Closing> {
        if self.control.failed.load(Ordering::Acquire) {
            return Some(Closing::Cancelled);
        }
        let mut all = true;
        for out in self.lanes.iter_mut() {
            all &= out.closed();
        }
        all.then_some(Closing::Cancelled)
    }

    fn abort(&mut self, _: &mut Ctx<'_>, error: Error) {
        self.fail_all(error);
    }

    fn is_boundary(&self) -> bool {
        true
    }

    fn on_park(&mut self, end: RunEnd) {
        for out in self.lanes.iter_mut() {
            out.on_park(end);
        }
    }

    /// Stops without a terminal signal of its own: after a lane failed, every other lane
    /// fails with that lane's error; otherwise each lane stops (see `RingOut::stop`).
    fn stop(&mut self) {
        self.pending = None;
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        let failure = self.control.failure();
        for (i, out) in self.lanes.iter_mut().enumerate() {
            match &failure {
                Some((lane, e)) if *lane != i && !out.closed() => out.fail(e.clone()),
                _ => out.stop(),
            }
        }
    }
}
