//! The interpreter's core: connection states, typed slots, the event ring and chasing, and
//! the [`Ctx`] through which a handler acts on its ports.

use std::any::TypeId;
use std::fmt;
use std::ptr::NonNull;

use rs_api::Error;

use super::super::mailbox::{Mailbox, Notifier};
use super::super::port::{Inlet, Outlet};
use super::super::IslandError;
use crate::loom::sync::Arc;
use crate::panics as report;

pub(super) const IN_READY: u32 = 1;
pub(super) const PULLING: u32 = 2;
pub(super) const PUSHING: u32 = 4;
pub(super) const OUT_READY: u32 = 8;
pub(super) const IN_CLOSED: u32 = 16;
pub(super) const OUT_CLOSED: u32 = 32;
pub(super) const IN_FAILED: u32 = 64;

pub(super) const PULL_START: u32 = IN_READY | PULLING;
pub(super) const PULL_END: u32 = PULLING | OUT_READY;
pub(super) const PUSH_START: u32 = PUSHING | OUT_READY;
pub(super) const PUSH_END: u32 = IN_READY | PUSHING;

/// Or'ed into a stage's shutdown counter while it keeps going.
pub(super) const KEEP_GOING: u32 = 1 << 31;
/// "No connection" in the chase slots.
pub(super) const NO_EVENT: u32 = u32::MAX;
/// "No stage" for `active`.
pub(super) const NO_STAGE: u32 = u32::MAX;
/// Chased events allowed per dequeued event.
pub(crate) const CHASE_LIMIT: u64 = 16;

/// One connection: out-port of `out_owner` to in-port of `in_owner`.
///
/// Aligned to 64 bytes (its 56 rounded up): a connection's address is then its index shifted,
/// not multiplied, on the chain of loads each event waits on (measured in the interpreter's
/// module docs), and no two connections share a cache line.
#[repr(align(64))]
pub(super) struct Conn {
    /// The port-state bitfield (see the module docs).
    pub(super) state: u32,
    /// The stage owning the in-port; `NO_STAGE` until a stage declares it.
    pub(super) in_owner: u32,
    /// The stage owning the out-port; `NO_STAGE` until a stage declares it.
    pub(super) out_owner: u32,
    /// The element type's id; checked on every typed access to `slot`.
    pub(super) type_id: TypeId,
    /// The connection's `Option<T>`, from `Box::into_raw`; freed by `SlotOps::free`.
    pub(super) slot: NonNull<()>,
    /// The dispatch entry: where the stages owning its two ports are found.
    pub(super) dispatch: Dispatch,
}

/// A connection's dispatch entry: for its in-port (`[0]`) and its out-port (`[1]`), a pointer
/// to the entry of the stage table that holds the owning stage's pointer (a
/// `NonNull<NonNull<dyn Stage>>`, untyped here: the stage table writes and reads it, see
/// `table::Stages`). Dangling until the interpreter is built.
#[derive(Clone, Copy)]
pub(super) struct Dispatch(pub(super) [NonNull<()>; 2]);

impl Dispatch {
    /// Not dispatching anywhere yet (before `Stages::new`).
    pub(super) const UNSET: Dispatch = Dispatch([NonNull::dangling(); 2]);
}

/// Type-erased operations on one slot (cold paths only).
#[derive(Clone, Copy)]
pub(super) struct SlotOps {
    /// Drops the element in the slot, if any.
    pub(super) clear: unsafe fn(NonNull<()>),
    /// Frees the slot's allocation (and its element).
    pub(super) free: unsafe fn(NonNull<()>),
    /// The element type's name, for errors.
    pub(super) type_name: &'static str,
}

/// # Safety
/// `p` must come from `Box::<Option<T>>::into_raw` and not be freed.
pub(super) unsafe fn clear_slot<T>(p: NonNull<()>) {
    // SAFETY: per the function's contract `p` is a live `Option<T>`; the interpreter holds no
    // other reference to it while a cold path runs.
    unsafe { *p.cast::<Option<T>>().as_ptr() = None }
}

/// # Safety
/// `p` must come from `Box::<Option<T>>::into_raw`, and is not used afterwards.
pub(super) unsafe fn free_slot<T>(p: NonNull<()>) {
    // SAFETY: per the function's contract `p` is the pointer of a boxed `Option<T>` that is
    // freed exactly once (in `Core::drop`).
    drop(unsafe { Box::from_raw(p.cast::<Option<T>>().as_ptr()) })
}

/// A connection's port list entry: `OUTLET_BIT` marks out-ports.
pub(super) const OUTLET_BIT: u32 = 1 << 31;

/// Counters for tests and benchmarks (they cost one increment each on the paths they count).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Events dequeued from the ring (each uses one unit of budget).
    pub dequeued: u64,
    /// Pushes and pulls processed by chasing (no enqueue, no dequeue).
    pub chased: u64,
    /// Asynchronous inputs run ([`Interpreter::run_async_input`](crate::island::Interpreter::run_async_input)).
    pub async_inputs: u64,
    /// Stages looked at by the finalisation logic (fast path and scans).
    pub finalisation_visits: u64,
    /// Cascade scans over all stages.
    pub finalisation_scans: u64,
    /// Stages finalised.
    pub finalised: u64,
}

/// What one handler may do: the interpreter's state, minus the stages.
pub(crate) struct Core {
    pub(super) conns: Vec<Conn>,
    pub(super) slot_ops: Vec<SlotOps>,
    /// Failures in flight: (connection, error), taken when the failure is decoded.
    pub(super) failures: Vec<(u32, Error)>,
    /// Per stage: ports still open, with `KEEP_GOING`.
    pub(super) shutdown: Vec<u32>,
    /// Per stage: finalised.
    pub(super) finalised: Vec<bool>,
    /// Per stage: the start of its ports in `port_list` (`stages + 1` entries).
    pub(super) port_start: Vec<u32>,
    /// Every stage's ports, connection indices, `OUTLET_BIT` for out-ports.
    pub(super) port_list: Vec<u32>,
    /// The event ring: connection indices.
    pub(super) queue: Box<[u32]>,
    pub(super) mask: u32,
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) chased_push: u32,
    pub(super) chased_pull: u32,
    pub(super) chase_counter: u64,
    /// The stage whose handler runs (or ran last).
    pub(super) active: u32,
    pub(super) pending_finalizations: u32,
    pub(super) running: u32,
    pub(super) gate: bool,
    pub(super) fuzz: Option<u64>,
    pub(crate) mailbox: Arc<Mailbox>,
    pub(super) stats: Stats,
    pub(super) names: Vec<&'static str>,
    /// Stages whose [`Stage::on_park`](crate::island::Stage::on_park) runs when the island's run ends, in registration order.
    pub(super) park_hooks: Vec<u32>,
    /// Per stage: in `park_hooks`.
    pub(super) hooked: Vec<bool>,
}

// SAFETY: the raw `slot` pointers point into allocations owned by this `Core` alone (made in
// `GraphBuilder::connection`, freed in `Drop`), holding `Option<T>` with `T: Send` (checked by
// `connection`'s bound); moving the `Core` to another thread moves that ownership along, like
// a `Box<Option<T>>` would. The connections' dispatch entries point into the interpreter's
// stage table (`Send`), which alone dereferences them and moves along with this `Core`.
unsafe impl Send for Core {}

impl Drop for Core {
    fn drop(&mut self) {
        for (conn, ops) in self.conns.iter().zip(&self.slot_ops) {
            let free = ops.free;
            let slot = conn.slot;
            // A panicking element destructor must not escape into the island's executor.
            report::drop_guarded(DropSlot(free, slot));
        }
    }
}

/// Frees one slot when dropped (so `drop_guarded` can contain a panicking element drop).
pub(super) struct DropSlot(pub(super) unsafe fn(NonNull<()>), pub(super) NonNull<()>);

impl Drop for DropSlot {
    fn drop(&mut self) {
        // SAFETY: built only in `Core::drop`, once per connection, from the slot pointer and
        // the matching `free_slot::<T>`; nothing uses the pointer afterwards.
        unsafe { (self.0)(self.1) }
    }
}

/// The context a handler gets: its ports, its stage, the island.
///
/// See the [stage module](crate::island::Stage) for what each operation means; the rules are Pekko's
/// `GraphStageLogic` rules. Misuse — pushing twice or before a pull, pulling twice or a closed
/// port, grabbing an empty port, a port of another element type — fails the stage with
/// [`IslandError::PortMisuse`], never anything worse.
pub struct Ctx<'a> {
    pub(super) core: &'a mut Core,
}

impl fmt::Debug for Ctx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("stage", &self.core.active)
            .finish_non_exhaustive()
    }
}

/// The cold half of [`Ctx::pull`]: a pull of a port whose upstream just completed is ignored;
/// a closed or already pulled port fails the stage.
#[cold]
#[inline(never)]
pub(super) fn pull_refused(c: u32, st: u32) {
    if st & IN_CLOSED != 0 {
        misuse("pull", c, "the port is closed");
    } else if st & IN_READY == 0 {
        misuse("pull", c, "pulled twice");
    }
}

#[cold]
#[inline(never)]
pub(super) fn misuse(op: &'static str, port: u32, reason: &'static str) -> ! {
    std::panic::panic_any(IslandError::PortMisuse { op, port, reason })
}

impl Core {
    #[inline]
    pub(super) fn enqueue(&mut self, c: u32) {
        debug_assert!(
            self.tail.wrapping_sub(self.head) <= self.mask,
            "more than one pending event per connection"
        );
        self.queue[(self.tail & self.mask) as usize] = c;
        self.tail = self.tail.wrapping_add(1);
    }

    #[inline]
    pub(super) fn dequeue(&mut self) -> Option<u32> {
        if self.head == self.tail {
            return None;
        }
        if let Some(seed) = self.fuzz.as_mut() {
            // xorshift64*: pick any pending event and swap it to the head.
            *seed ^= *seed >> 12;
            *seed ^= *seed << 25;
            *seed ^= *seed >> 27;
            let r = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let len = self.tail.wrapping_sub(self.head);
            let pick = self.head.wrapping_add((r % u64::from(len)) as u32);
            let (a, b) = (
                (self.head & self.mask) as usize,
                (pick & self.mask) as usize,
            );
            self.queue.swap(a, b);
        }
        let c = self.queue[(self.head & self.mask) as usize];
        self.head = self.head.wrapping_add(1);
        Some(c)
    }

    /// Chases a push (`PUSH`) or a pull on `c`: into its chase slot while the counter allows
    /// and the slot is free, else into the queue.
    #[inline(always)]
    pub(super) fn chase<const PUSH: bool>(&mut self, c: u32) {
        let slot = if PUSH {
            &mut self.chased_push
        } else {
            &mut self.chased_pull
        };
        if self.chase_counter > 0 && *slot == NO_EVENT {
            self.chase_counter -= 1;
            *slot = c;
        } else {
            self.enqueue(c);
        }
    }

    /// The typed slot of connection `c`.
    #[inline]
    pub(super) fn slot<T: 'static>(&mut self, c: u32, op: &'static str) -> &mut Option<T> {
        let conn = &self.conns[c as usize];
        if conn.type_id != TypeId::of::<T>() {
            misuse(op, c, "the port carries another element type");
        }
        // SAFETY: `conn.slot` came from `Box::<Option<U>>::into_raw` in
        // `GraphBuilder::connection::<U>` and lives until `Core` is dropped; `type_id` was set
        // to `TypeId::of::<U>()` there and was just checked equal to `TypeId::of::<T>()`, so
        // `U == T`. The returned borrow is tied to `&mut self`, and the interpreter makes no
        // other reference to the slot while it lives (cold paths go through `SlotOps` with
        // `&mut self` too).
        unsafe { &mut *conn.slot.cast::<Option<T>>().as_ptr() }
    }

    #[inline]
    pub(super) fn complete_connection(&mut self, stage: u32) {
        let s = stage as usize;
        let count = self.shutdown[s];
        if count & !KEEP_GOING > 0 {
            self.shutdown[s] = count - 1;
            if count - 1 == 0 {
                self.pending_finalizations += 1;
            }
        }
    }

    pub(super) fn complete_out(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        let st = conn.state;
        conn.state = st | OUT_CLOSED;
        let out_owner = conn.out_owner;
        if self.chased_push == c {
            // Push-then-close cannot be chased: it must be decoded.
            self.chased_push = NO_EVENT;
            self.stats.chased = self.stats.chased.wrapping_sub(1);
            self.enqueue(c);
        } else if st & (IN_CLOSED | PUSHING | PULLING | OUT_CLOSED) == 0 {
            self.enqueue(c);
        }
        if st & OUT_CLOSED == 0 {
            self.complete_connection(out_owner);
        }
    }

    pub(super) fn fail_out(&mut self, c: u32, error: Error) {
        let conn = &mut self.conns[c as usize];
        let st = conn.state;
        conn.state = st | OUT_CLOSED;
        let out_owner = conn.out_owner;
        if st & (IN_CLOSED | OUT_CLOSED) == 0 {
            conn.state = st | OUT_CLOSED | IN_FAILED;
            self.failures.push((c, error));
            if st & (PULLING | PUSHING) == 0 {
                self.enqueue(c);
            } else if self.chased_push == c {
                // The chase would treat it as a plain push and lose the failure.
                self.chased_push = NO_EVENT;
                self.stats.chased = self.stats.chased.wrapping_sub(1);
                self.enqueue(c);
            }
        }
        if st & OUT_CLOSED == 0 {
            self.complete_connection(out_owner);
        }
    }

    pub(super) fn cancel_in(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        let st = conn.state;
        conn.state = st | IN_CLOSED;
        let in_owner = conn.in_owner;
        if st & OUT_CLOSED == 0 {
            // Nothing can grab the element any more.
            let clear = self.slot_ops[c as usize].clear;
            // SAFETY: the slot of connection `c` with its own type's `clear`; no reference to
            // the slot is alive (we hold `&mut self`).
            unsafe { clear(self.conns[c as usize].slot) };
            if st & (PULLING | PUSHING | IN_CLOSED) == 0 {
                self.enqueue(c);
            } else if self.chased_pull == c {
                // The chase would treat it as a plain pull and lose the cancel.
                self.chased_pull = NO_EVENT;
                self.stats.chased = self.stats.chased.wrapping_sub(1);
                self.enqueue(c);
            }
        }
        if st & IN_CLOSED == 0 {
            self.complete_connection(in_owner);
        }
    }

    pub(super) fn ports_of(&self, stage: u32) -> std::ops::Range<usize> {
        self.port_start[stage as usize] as usize..self.port_start[stage as usize + 1] as usize
    }

    /// Completes (or fails) every out-port of `stage` and cancels every in-port.
    pub(super) fn close_stage(&mut self, stage: u32, error: Option<&Error>) {
        for i in self.ports_of(stage) {
            let p = self.port_list[i];
            if p & OUTLET_BIT != 0 {
                let c = p & !OUTLET_BIT;
                match error {
                    Some(e) => self.fail_out(c, e.clone()),
                    None => self.complete_out(c),
                }
            } else {
                self.cancel_in(p);
            }
        }
    }

    pub(super) fn set_keep_going(&mut self, stage: u32, enabled: bool) {
        let s = stage as usize;
        if enabled {
            if self.shutdown[s] == 0 && !self.finalised[s] {
                // Completed but not finalised yet: no longer pending.
                self.pending_finalizations -= 1;
            }
            self.shutdown[s] |= KEEP_GOING;
        } else {
            let before = self.shutdown[s];
            self.shutdown[s] &= !KEEP_GOING;
            if before & KEEP_GOING != 0 && self.shutdown[s] == 0 {
                self.pending_finalizations += 1;
            }
        }
    }
}

impl<'a> Ctx<'a> {
    /// Pushes `elem` on `outlet`. Allowed once per pull of downstream
    /// ([`is_available`](Self::is_available)); a push to a port whose downstream just
    /// cancelled drops `elem` (the cancel arrives as `on_downstream_finish`).
    ///
    /// # Panics
    ///
    /// With [`IslandError::PortMisuse`] (which fails the stage) when the port was not pulled,
    /// is closed, or carries another type.
    #[inline]
    pub fn push<T: 'static>(&mut self, outlet: Outlet<T>, elem: T) {
        let c = outlet.id;
        let conn = &mut self.core.conns[c as usize];
        let st = conn.state;
        if st & (OUT_READY | OUT_CLOSED | IN_CLOSED) == OUT_READY
            && conn.type_id == TypeId::of::<T>()
        {
            // SAFETY: `conn.slot` came from `Box::<Option<U>>::into_raw` in
            // `GraphBuilder::connection::<U>` and lives until `Core` is dropped; `type_id` is
            // `TypeId::of::<U>()`, just checked equal to `TypeId::of::<T>()`, so `U == T`. No
            // other reference to the slot exists while this write runs (`&mut self`).
            unsafe { *conn.slot.cast::<Option<T>>().as_ptr() = Some(elem) };
            conn.state = st ^ PUSH_START;
            self.core.chase::<true>(c);
        } else {
            self.push_refused(c, st, TypeId::of::<T>());
        }
    }

    /// The cold half of [`push`](Self::push): drop the element silently when downstream
    /// cancelled (not yet decoded), fail the stage otherwise.
    #[cold]
    #[inline(never)]
    pub(super) fn push_refused(&mut self, c: u32, st: u32, ty: TypeId) {
        if self.core.conns[c as usize].type_id != ty {
            misuse("push", c, "the port carries another element type");
        }
        if st & (OUT_READY | OUT_CLOSED | IN_CLOSED) == (OUT_READY | IN_CLOSED) {
            return;
        }
        if st & OUT_CLOSED != 0 {
            misuse("push", c, "the port is closed");
        }
        misuse("push", c, "pushed twice, or before downstream pulled");
    }

    /// Whether the push just made on connection `id` waits in the chase slot: then that
    /// out-port has no room (a push in the slot has not been processed, so its port is not
    /// [available](Self::is_available): `PUSHING` is set until then, also when the port is
    /// closed meanwhile). A cheaper answer than [`is_available`](Self::is_available) for
    /// "did that push fill the port?" — one load, which the compiler can often answer from
    /// the chase it just made; `false` tells nothing (the push may have been queued): ask
    /// `is_available` then.
    #[inline(always)]
    pub(crate) fn push_chased(&self, id: u32) -> bool {
        self.core.chased_push == id
    }

    /// Asks upstream of `inlet` for one element; it arrives as `on_push`. A pull on a port whose
    /// upstream just completed is ignored (the completion arrives next).
    ///
    /// # Panics
    ///
    /// With [`IslandError::PortMisuse`] when the port was pulled already or is closed.
    #[inline]
    pub fn pull<T>(&mut self, inlet: Inlet<T>) {
        let c = inlet.id;
        let conn = &mut self.core.conns[c as usize];
        let st = conn.state;
        if st & (IN_READY | IN_CLOSED | OUT_CLOSED) == IN_READY {
            conn.state = st ^ PULL_START;
            self.core.chase::<false>(c);
        } else {
            pull_refused(c, st);
        }
    }

    /// Pulls `inlet` unless it is pulled already or closed (or its upstream's end is on its
    /// way): [`has_been_pulled`](Self::has_been_pulled), [`is_inlet_closed`](Self::is_inlet_closed)
    /// and [`pull`](Self::pull) from one look at the port. For a stage between two ports that
    /// passes its downstream's pull on.
    #[inline]
    pub(crate) fn pull_if_idle<T>(&mut self, inlet: Inlet<T>) {
        let c = inlet.id;
        let conn = &mut self.core.conns[c as usize];
        let st = conn.state;
        if st & (IN_READY | IN_CLOSED | OUT_CLOSED) == IN_READY {
            conn.state = st ^ PULL_START;
            self.core.chase::<false>(c);
        }
    }

    /// Takes the element that arrived on `inlet`.
    ///
    /// # Panics
    ///
    /// With [`IslandError::PortMisuse`] when there is none (use
    /// [`try_grab`](Self::try_grab) to ask).
    #[inline]
    pub fn grab<T: 'static>(&mut self, inlet: Inlet<T>) -> T {
        match self.try_grab(inlet) {
            Some(x) => x,
            None => misuse("grab", inlet.id, "no element is available"),
        }
    }

    /// Takes the element that arrived on `inlet`, if there is one.
    ///
    /// # Panics
    ///
    /// With [`IslandError::PortMisuse`] when the port carries another type.
    #[inline]
    pub fn try_grab<T: 'static>(&mut self, inlet: Inlet<T>) -> Option<T> {
        let c = inlet.id;
        let conn = &self.core.conns[c as usize];
        if conn.state & IN_READY == 0 {
            return None;
        }
        if conn.type_id != TypeId::of::<T>() {
            misuse("grab", c, "the port carries another element type");
        }
        // SAFETY: as in `Core::slot`: the slot is a live `Option<T>` (type checked just
        // above), and no other reference to it exists while we take from it (`&mut self`).
        unsafe { (*conn.slot.cast::<Option<T>>().as_ptr()).take() }
    }

    /// Whether an element is waiting on `inlet`.
    ///
    /// # Panics
    ///
    /// With [`IslandError::PortMisuse`] when the port carries another type.
    pub fn has_element<T: 'static>(&mut self, inlet: Inlet<T>) -> bool {
        let c = inlet.id;
        self.core.conns[c as usize].state & IN_READY != 0
            && self.core.slot::<T>(c, "has_element").is_some()
    }

    /// Whether `outlet` may be pushed now (downstream pulled, port open).
    pub fn is_available<T>(&self, outlet: Outlet<T>) -> bool {
        self.core.conns[outlet.id as usize].state & (OUT_READY | OUT_CLOSED) == OUT_READY
    }

    /// Whether `inlet` was pulled and its element has not arrived yet.
    pub fn has_been_pulled<T>(&self, inlet: Inlet<T>) -> bool {
        self.core.conns[inlet.id as usize].state & (IN_READY | IN_CLOSED) == 0
    }

    /// Whether `inlet` is closed (cancelled by this stage, or upstream's end decoded).
    pub fn is_inlet_closed<T>(&self, inlet: Inlet<T>) -> bool {
        self.core.conns[inlet.id as usize].state & IN_CLOSED != 0
    }

    /// Whether `outlet` is closed (completed or failed by this stage, or cancelled downstream
    /// and decoded).
    pub fn is_outlet_closed<T>(&self, outlet: Outlet<T>) -> bool {
        self.core.conns[outlet.id as usize].state & OUT_CLOSED != 0
    }

    /// Completes `outlet`: downstream gets `on_upstream_finish` after any element pushed
    /// before.
    pub fn complete<T>(&mut self, outlet: Outlet<T>) {
        self.core.complete_out(outlet.id);
    }

    /// Fails `outlet`: downstream gets `on_upstream_failure` after any element pushed before.
    pub fn fail<T>(&mut self, outlet: Outlet<T>, error: Error) {
        self.core.fail_out(outlet.id, error);
    }

    /// Cancels `inlet`: upstream gets `on_downstream_finish`; an element waiting there is
    /// dropped.
    pub fn cancel<T>(&mut self, inlet: Inlet<T>) {
        self.core.cancel_in(inlet.id);
    }

    /// Completes every out-port and cancels every in-port of this stage.
    pub fn complete_stage(&mut self) {
        let s = self.core.active;
        self.core.close_stage(s, None);
    }

    /// Fails every out-port with `error` and cancels every in-port of this stage.
    pub fn fail_stage(&mut self, error: Error) {
        let s = self.core.active;
        self.core.close_stage(s, Some(&error));
    }

    /// Keeps this stage alive (not finalised) after its last port closed, until turned off.
    pub fn set_keep_going(&mut self, enabled: bool) {
        let s = self.core.active;
        self.core.set_keep_going(s, enabled);
    }

    /// Asks for this stage's [`on_park`](crate::island::Stage::on_park) to run each time the island's run
    /// ends (before it parks or yields), from now until the stage is finalised. A stage that
    /// batches its output flushes there: the island is about to stop running, so whatever it
    /// produced in this run must leave now. Calling it again does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::island::{Ctx, Inlet, PortId, Ports, RunEnd, Stage};
    ///
    /// /// Counts elements and reports the count once per run of its island.
    /// struct PerRun { inlet: Inlet<u64>, count: u64, report: std::sync::mpsc::Sender<u64> }
    /// impl Stage for PerRun {
    ///     fn ports(&self, p: &mut Ports) { p.inlet(self.inlet); }
    ///     fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
    ///         ctx.call_on_park();
    ///         ctx.pull(self.inlet);
    ///     }
    ///     fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
    ///         ctx.grab(self.inlet);
    ///         self.count += 1;
    ///         ctx.pull(self.inlet);
    ///     }
    ///     fn on_park(&mut self, _: RunEnd, _: &mut Ctx<'_>) {
    ///         if self.count > 0 {
    ///             self.report.send(std::mem::take(&mut self.count)).ok();
    ///         }
    ///     }
    /// }
    /// # let _ = std::marker::PhantomData::<PerRun>;
    /// ```
    pub fn call_on_park(&mut self) {
        let s = self.core.active;
        if let Some(h) = self.core.hooked.get_mut(s as usize) {
            if !*h {
                *h = true;
                self.core.park_hooks.push(s);
            }
        }
    }

    /// The index of the running stage.
    pub fn stage_index(&self) -> u32 {
        self.core.active
    }

    /// A handle through which any thread can post to this stage: its
    /// [`on_async_input`](crate::island::Stage::on_async_input) then runs on the island.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::island::{Ctx, GraphBuilder, Notifier, Outlet, PortId, Ports, Stage};
    ///
    /// /// Emits one `()` per post, from any thread.
    /// struct Ticks { out: Outlet<()>, ticks: u32, notifier: std::sync::mpsc::Sender<Notifier> }
    /// impl Stage for Ticks {
    ///     fn ports(&self, p: &mut Ports) { p.outlet(self.out); }
    ///     fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
    ///         self.notifier.send(ctx.notifier()).unwrap();
    ///     }
    ///     fn on_pull(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    ///     fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
    ///         self.ticks += 1;
    ///         if ctx.is_available(self.out) { ctx.push(self.out, ()) }
    ///     }
    /// }
    /// # let _ = std::marker::PhantomData::<Ticks>;
    /// ```
    pub fn notifier(&self) -> Notifier {
        Notifier {
            mailbox: self.core.mailbox.clone(),
            stage: self.core.active,
        }
    }
}
