//! The stage table: the stages, owned, and the dispatch entries (kept in the connections)
//! from connections to the stages owning their ports.

use std::ptr::NonNull;

use rs_api::Error;

use super::super::port::{PortId, Ports};
use super::super::stage::Stage;
use crate::panics as report;

use super::core::{Conn, Ctx, OUTLET_BIT};

/// A stage owned through the pointer [`Box::leak`] gave (freed by [`Stages`]'s `Drop`).
pub(super) type StagePtr = NonNull<dyn Stage>;

/// A connection's dispatch entry: copies of the pointers of the stage owning its in-port
/// (`[0]`) and of the stage owning its out-port (`[1]`). It lives in the connection
/// ([`Conn::targets`]), so that an event reaches its handler from the connection the event
/// loop has already looked up for its state: one bounds check and one cache line per event,
/// where a table of its own beside the connections cost a second bounds check and a second
/// base load (about six instructions per event, 24 per element of the `interpreter`
/// scenario with one stage: see the module docs). Only this module makes or reads one.
#[derive(Clone, Copy)]
pub(super) struct Targets([StagePtr; 2]);

impl Targets {
    /// No owner yet: both sides point at a [`Released`] (until [`Stages::new`]).
    pub(super) fn unset() -> Targets {
        let r = released();
        Targets([r, r])
    }
}

/// The stages of an interpreter, owned; the dispatch entries ([`Targets`]) in the
/// connections hold copies of their pointers.
///
/// The only `unsafe` of the stage table is here. Every stage is reached through `&mut self`
/// ([`get_mut`](Self::get_mut), [`in_owner`](Self::in_owner), [`out_owner`](Self::out_owner)),
/// so at most one `&mut dyn Stage` exists at a time, and a stage leaves the table only through
/// [`release`](Self::release), which first points every copy of its pointer at [`Released`].
pub(super) struct Stages {
    /// Stage index → the stage (a finalised stage's entry is a `Released`). Each pointer is
    /// freed once, in `Drop`.
    pub(super) own: Vec<StagePtr>,
}

// SAFETY: `Stages` owns the stages behind `own` as the `Box<dyn Stage>` they came from did
// (`Stage: Send`); the connections' `Targets` only copy those pointers; moving the table to
// another thread moves that ownership along, and nothing else refers to the stages.
unsafe impl Send for Stages {}

/// A `Released`, leaked: a zero-sized type, so this allocates nothing.
pub(super) fn released() -> StagePtr {
    let b: Box<dyn Stage> = Box::new(Released);
    NonNull::from(Box::leak(b))
}

impl Stages {
    /// Takes ownership of `stages` and writes every connection's dispatch entry: `conns`
    /// name each connection's two owners (all set, as `build` checks, except inside a fused
    /// run, whose connections have none and carry no event: their entries point at a
    /// `Released`).
    pub(super) fn new(stages: Vec<Box<dyn Stage>>, conns: &mut [Conn]) -> Stages {
        let own: Vec<StagePtr> = stages
            .into_iter()
            .map(|b| NonNull::from(Box::leak(b)))
            .collect();
        let owner = |s: u32| own.get(s as usize).copied().unwrap_or_else(released);
        for c in conns.iter_mut() {
            c.targets = Targets([owner(c.in_owner), owner(c.out_owner)]);
        }
        Stages { own }
    }

    pub(super) fn len(&self) -> usize {
        self.own.len()
    }

    /// Stage `s` (panics when there is no such stage).
    #[inline(always)]
    pub(super) fn get_mut(&mut self, s: usize) -> &mut dyn Stage {
        // SAFETY: `own[s]` came from `Box::leak` and is freed only in `Drop` (a released
        // stage's box is freed by `release`'s caller only after its entry was replaced); the
        // returned borrow holds `&mut self`, so no other reference to any stage is alive.
        unsafe { &mut *self.own[s].as_ptr() }
    }

    /// The stage owning the in-port of the connection whose dispatch entry is `t`.
    ///
    /// # Safety
    ///
    /// `t` is the [`Conn::targets`] of a connection of the interpreter this table belongs to
    /// (written by [`new`](Self::new) and [`release`](Self::release) of this table only).
    #[inline(always)]
    pub(super) unsafe fn in_owner(&mut self, t: Targets) -> &mut dyn Stage {
        // SAFETY: per the contract `t.0[0]` is a copy of the live `own` entry of the in-port's
        // owner (set in `new`, replaced with `release`'s `Released` before that stage's box
        // leaves); the returned borrow holds `&mut self`, so no other reference to any stage
        // is alive.
        unsafe { &mut *t.0[0].as_ptr() }
    }

    /// The stage owning the out-port of the connection whose dispatch entry is `t`.
    ///
    /// # Safety
    ///
    /// As for [`in_owner`](Self::in_owner).
    #[inline(always)]
    pub(super) unsafe fn out_owner(&mut self, t: Targets) -> &mut dyn Stage {
        // SAFETY: as in `in_owner`, for the out-port's owner (`t.0[1]`).
        unsafe { &mut *t.0[1].as_ptr() }
    }

    /// Takes stage `s` out of the table (its entry and every copy of it in the dispatch
    /// entries of `conns` now point at a `Released`) and hands back its box. `ports` are its
    /// port-list entries (connection indices, `OUTLET_BIT` for out-ports).
    pub(super) fn release(&mut self, s: usize, ports: &[u32], conns: &mut [Conn]) -> Box<dyn Stage> {
        let r = released();
        for &p in ports {
            if p & OUTLET_BIT != 0 {
                conns[(p & !OUTLET_BIT) as usize].targets.0[1] = r;
            } else {
                conns[p as usize].targets.0[0] = r;
            }
        }
        let old = std::mem::replace(&mut self.own[s], r);
        // SAFETY: `old` came from `Box::leak` (in `new`) and no copy of it is left: `own[s]`
        // was just replaced, and so was every dispatch entry naming stage `s` (each port has
        // one owner, which `build` checked, and `ports` are all of stage `s`'s ports).
        let b = unsafe { Box::from_raw(old.as_ptr()) };
        if crate::loom::fault::active(crate::loom::fault::Fault::StageRelease) {
            // The loom model's broken twin: the caller's post_stop reaches the stage; its
            // box is then lost (its state is never dropped).
            let mut b = b;
            b.post_stop();
            std::mem::forget(b);
            return Box::new(Released);
        }
        b
    }
}

impl Drop for Stages {
    fn drop(&mut self) {
        for p in self.own.drain(..) {
            // SAFETY: each `own` entry came from `Box::leak` and is freed here once (`release`
            // replaced, not duplicated, the entries it took); the dispatch entries hold copies
            // only.
            let b = unsafe { Box::from_raw(p.as_ptr()) };
            report::drop_guarded(b);
        }
    }
}

/// What stands in a finalised stage's place: no ports, and every event ignored (none can
/// reach it: its ports are all closed). A zero-sized type, so putting it in a `Box` does not
/// allocate.
pub(super) struct Released;

impl Stage for Released {
    fn ports(&self, _: &mut Ports) {}
    fn on_push(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_pull(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_upstream_finish(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_upstream_failure(&mut self, _: PortId, _: Error, _: &mut Ctx<'_>) {}
    fn on_downstream_finish(&mut self, _: PortId, _: &mut Ctx<'_>) {}
}
