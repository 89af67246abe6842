//! The stage table: the stages, owned, and what the dispatch entries kept in the connections
//! point at.

use std::ptr::NonNull;

use rs_api::Error;

use super::super::port::{PortId, Ports};
use super::super::stage::Stage;
use crate::panics as report;

use super::core::{Conn, Ctx, Dispatch};

/// A stage owned through the pointer [`Box::leak`] gave (freed by [`Stages`]'s `Drop`).
pub(super) type StagePtr = NonNull<dyn Stage>;

/// The stages of an interpreter, owned, and what the connections' dispatch entries
/// ([`Dispatch`]) point at.
///
/// A connection's dispatch entry points at the `own` entry of each of its two owners (not at
/// the stage: at the slot that holds the stage's pointer), so that an event reaches its
/// handler from the connection the event loop has already looked up for its state: one
/// bounds check per event, where a table of copies beside the connections cost a second bounds
/// check and a second base load (counted in the interpreter's module docs). Releasing a stage
/// replaces its `own` entry, which every dispatch entry naming it then reads: no copy of a
/// stage's pointer exists outside `own`.
///
/// The only `unsafe` of the stage table is here. `own` is a raw allocation, reached only
/// through raw pointers derived from its base (never through a reference), so the dispatch
/// entries derived from that base stay valid while entries are replaced. Every stage is
/// reached through `&mut self` ([`get_mut`](Self::get_mut), [`in_owner`](Self::in_owner),
/// [`out_owner`](Self::out_owner)), so at most one `&mut dyn Stage` exists at a time, and a
/// stage leaves the table only through [`release`](Self::release), which first points its
/// `own` entry at [`Released`].
pub(super) struct Stages {
    /// Stage index → the stage (a finalised stage's entry is a `Released`): the base of a
    /// `Box<[StagePtr]>` of `len` entries (from `Box::into_raw`, freed in `Drop`, never
    /// resized). Each stage pointer is freed once, in `Drop`.
    own: NonNull<StagePtr>,
    len: usize,
    /// What the dispatch entry of a port without an owner (inside a fused run: no event
    /// reaches it) points at: a `Released`, from `Box::into_raw` (freed in `Drop`).
    ownerless: NonNull<StagePtr>,
}

// SAFETY: `Stages` owns the stages behind `own` as the `Box<dyn Stage>` they came from did
// (`Stage: Send`), and the two allocations `own` and `ownerless`; the connections' dispatch
// entries only point at its entries; moving the table to another thread (with the
// connections, in the same interpreter) moves that ownership along, and nothing else refers
// to the stages.
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
        let own: Box<[StagePtr]> = stages
            .into_iter()
            .map(|b| NonNull::from(Box::leak(b)))
            .collect();
        let len = own.len();
        let own = NonNull::from(Box::leak(own)).cast::<StagePtr>();
        let ownerless = NonNull::from(Box::leak(Box::new(released())));
        let table = Stages {
            own,
            len,
            ownerless,
        };
        for c in conns.iter_mut() {
            c.dispatch = Dispatch([table.entry(c.in_owner), table.entry(c.out_owner)]);
        }
        table
    }

    /// The entry of stage `s` (or `ownerless` for `NO_STAGE`), as a dispatch entry's side.
    fn entry(&self, s: u32) -> NonNull<()> {
        let s = s as usize;
        if s < self.len {
            // SAFETY: `s < len`: inside the `own` allocation (pointer arithmetic only).
            unsafe { self.own.add(s) }.cast()
        } else {
            self.ownerless.cast()
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Stage `s`'s entry (panics when there is no such stage).
    #[inline(always)]
    fn slot(&self, s: usize) -> NonNull<StagePtr> {
        assert!(s < self.len, "no stage {s}");
        // SAFETY: `s < len`: inside the `own` allocation.
        unsafe { self.own.add(s) }
    }

    /// Stage `s` (panics when there is no such stage).
    #[inline(always)]
    pub(super) fn get_mut(&mut self, s: usize) -> &mut dyn Stage {
        let slot = self.slot(s);
        // SAFETY: `slot` is a live entry of `own` (read through the raw base); it holds a
        // pointer from `Box::leak`, freed only in `Drop` (a released stage's box is freed by
        // `release`'s caller only after its entry was replaced); the returned borrow holds
        // `&mut self`, so no other reference to any stage is alive.
        unsafe { &mut *slot.read().as_ptr() }
    }

    /// The stage behind side `SIDE` of dispatch entry `d` (0: the in-port's owner, 1: the
    /// out-port's).
    ///
    /// # Safety
    ///
    /// `d` is the dispatch entry of a connection of the interpreter this table belongs to
    /// (written by this table's [`new`](Self::new)).
    #[inline(always)]
    unsafe fn target<const SIDE: usize>(&mut self, d: Dispatch) -> &mut dyn Stage {
        // SAFETY: per the contract, `d.0[SIDE]` was derived in `new` from this table's `own`
        // base (an entry inside it) or from `ownerless`, both alive while the table is and
        // never reached through a reference; the entry holds a live stage pointer (from
        // `Box::leak`, replaced by a `Released` in `release` before that stage's box leaves).
        // Nothing writes the entry while it is read (`&mut self`), and the returned borrow
        // holds `&mut self`, so no other reference to any stage is alive.
        unsafe { &mut *d.0[SIDE].cast::<StagePtr>().read().as_ptr() }
    }

    /// The stage owning the in-port of the connection whose dispatch entry is `d`.
    ///
    /// # Safety
    ///
    /// `d` is the dispatch entry of a connection of the interpreter this table belongs to.
    #[inline(always)]
    pub(super) unsafe fn in_owner(&mut self, d: Dispatch) -> &mut dyn Stage {
        // SAFETY: the caller's contract is `target`'s.
        unsafe { self.target::<0>(d) }
    }

    /// The stage owning the out-port of the connection whose dispatch entry is `d`.
    ///
    /// # Safety
    ///
    /// As for [`in_owner`](Self::in_owner).
    #[inline(always)]
    pub(super) unsafe fn out_owner(&mut self, d: Dispatch) -> &mut dyn Stage {
        // SAFETY: the caller's contract is `target`'s.
        unsafe { self.target::<1>(d) }
    }

    /// Takes stage `s` out of the table (its entry now points at a `Released`, and so does
    /// every dispatch entry naming it, which reads that entry) and hands back its box.
    pub(super) fn release(&mut self, s: usize) -> Box<dyn Stage> {
        let slot = self.slot(s);
        // SAFETY: `slot` is a live entry of `own`, written through the raw base (`&mut self`:
        // nothing reads it meanwhile).
        let old = unsafe { slot.replace(released()) };
        // SAFETY: `old` came from `Box::leak` (in `new`) and no copy of it is left: its entry
        // was just replaced, and dispatch entries hold no copies (they point at the entry).
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
        // SAFETY: `own` and `len` are the boxed slice `new` leaked, and `ownerless` the box;
        // each is taken back once, here, and nothing uses them afterwards (the dispatch
        // entries that point into them are not dereferenced once the table is dropped:
        // the interpreter drops its stage table and its connections together).
        let own = unsafe {
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.own.as_ptr(),
                self.len,
            ))
        };
        // SAFETY: as above, for `ownerless`.
        let ownerless = unsafe { Box::from_raw(self.ownerless.as_ptr()) };
        for p in own.iter().copied().chain(std::iter::once(*ownerless)) {
            // SAFETY: each stage pointer came from `Box::leak` and is freed here once
            // (`release` replaced, not duplicated, the entries it took; a `Released` is
            // zero-sized); the dispatch entries hold no copies.
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
