//! The fused-stage interpreter (seed 002; Pekko's `GraphInterpreter` with #2985, #2986 and
//! #3373).
//!
//! # Model
//!
//! The interpreter owns the stages (`logics`) and the connections (`Core::conns`); each
//! connection joins one out-port to one in-port and holds:
//!
//! * `state`, a bitfield. The low four bits are a one-hot state machine — `IN_READY` (1),
//!   `PULLING` (2), `PUSHING` (4), `OUT_READY` (8) — and sticky flags sit above: `IN_CLOSED`
//!   (16), `OUT_CLOSED` (32), `IN_FAILED` (64). Transitions XOR fixed masks so the flags stay
//!   untouched: pull start `0011`, pull end `1010`, push start `1100`, push end `0101`.
//! * a **typed slot**: an `Option<T>` in its own allocation, made once when the connection is
//!   made, reached through a raw pointer and checked against the connection's `TypeId` on every
//!   access. Elements are never boxed per hop; the interpreter schedules connection indices
//!   only.
//! * its two owners (stage indices), and, in the stage table's dispatch table, copies of the
//!   two owners' stage pointers: an event reaches its handler in one load from its connection
//!   (the owner index stays for everything else).
//!
//! Events live in a power-of-two ring of connection indices (`u32`), sized to the number of
//! connections: there is at most one pending event per connection, because an event is only
//! enqueued by the transition that starts it, and the decoder reads what happened from the
//! state bits. The one exception — push then close on one connection — is decoded as the push
//! first, after which the connection is enqueued again for the close.
//!
//! Decoding, in priority order: PUSH (`PUSHING`, neither closed flag); PULL; CANCEL
//! (`IN_CLOSED` only: the out-owner gets `on_downstream_finish`); COMPLETE or FAIL
//! (`OUT_CLOSED` only: a pending push goes first, then `on_upstream_finish` or
//! `on_upstream_failure`). The queue is FIFO, which makes the interpreter fair.
//!
//! # Chasing
//!
//! A push or pull made inside a handler goes into the single `chased_push` / `chased_pull`
//! slot when the chase counter is positive and the slot is free, and is then processed right
//! after the handler, with no enqueue, dequeue or decode. The counter is reset to
//! `min(CHASE_LIMIT = 16, budget left)` for every dequeued event; chased events do not use the
//! budget. Chasing is aborted (the connection goes back to the queue, to be decoded) when
//! `complete` or `fail` hits a chased push (push-then-close must be decoded), when `cancel`
//! hits a chased pull, and when a handler panics (the counter drops to zero and both chased
//! slots are enqueued). The counter is zero outside [`Interpreter::execute`], so events from
//! outside always enqueue.
//!
//! # Finalisation
//!
//! Each stage has a shutdown counter: its number of ports, with `KEEP_GOING` or'ed in while the
//! stage asked to stay alive. Closing a port decrements its owner's counter; a counter that
//! reaches zero adds one to `pending_finalizations`. After each event the interpreter looks at
//! that **counter** — one load and a branch, the gate of Pekko #2986 — and only when it is
//! positive runs the finalisation: first the O(1) fast path (the stage that just ran), then,
//! only while the counter stays positive (a cascade), a scan of the stages in order, looped
//! because `post_stop` may complete more stages (Pekko #3373). Finalising calls `post_stop`
//! exactly once and drops the stage (its state is released); elements left in its in-port
//! slots are dropped too, while an element pushed to its downstream just before completion
//! stays available there. [`Interpreter::set_finalisation_gate`] turns the gate off (every
//! event then checks the active stage, as before #2986), for the benchmark.
//!
//! # Fusion
//!
//! The interpreter runs whatever stages it is given. Linear operators are fused before they
//! get here, by the compiler: a [`Flow`](crate::flow::Flow) (or one
//! [`OperatorStage`](crate::flow::OperatorStage) per operator, for a graph wired by hand)
//! makes one stage of a whole run of them.
//!
//! # Fuzzing
//!
//! [`Interpreter::set_fuzzing`] turns chasing off and dequeues in a pseudo-random order, so
//! tests can check that their outcome does not depend on the scheduling order.

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use rs_api::Error;

use super::mailbox::{Mailbox, Notifier};
use super::stage::{Inlet, Outlet, PortId, Ports, RunEnd, Stage};
use super::IslandError;
use crate::loom::sync::Arc;
use crate::panics as report;

const IN_READY: u32 = 1;
const PULLING: u32 = 2;
const PUSHING: u32 = 4;
const OUT_READY: u32 = 8;
const IN_CLOSED: u32 = 16;
const OUT_CLOSED: u32 = 32;
const IN_FAILED: u32 = 64;

const PULL_START: u32 = IN_READY | PULLING;
const PULL_END: u32 = PULLING | OUT_READY;
const PUSH_START: u32 = PUSHING | OUT_READY;
const PUSH_END: u32 = IN_READY | PUSHING;

/// Or'ed into a stage's shutdown counter while it keeps going.
const KEEP_GOING: u32 = 1 << 31;
/// "No connection" in the chase slots.
const NO_EVENT: u32 = u32::MAX;
/// "No stage" for `active`.
const NO_STAGE: u32 = u32::MAX;
/// Chased events allowed per dequeued event.
pub const CHASE_LIMIT: u64 = 16;

/// One connection: out-port of `out_owner` to in-port of `in_owner`.
struct Conn {
    /// The port-state bitfield (see the module docs).
    state: u32,
    /// The stage owning the in-port; `NO_STAGE` until a stage declares it.
    in_owner: u32,
    /// The stage owning the out-port; `NO_STAGE` until a stage declares it.
    out_owner: u32,
    /// The element type's id; checked on every typed access to `slot`.
    type_id: TypeId,
    /// The connection's `Option<T>`, from `Box::into_raw`; freed by `SlotOps::free`.
    slot: NonNull<()>,
}

/// Type-erased operations on one slot (cold paths only).
#[derive(Clone, Copy)]
struct SlotOps {
    /// Drops the element in the slot, if any.
    clear: unsafe fn(NonNull<()>),
    /// Frees the slot's allocation (and its element).
    free: unsafe fn(NonNull<()>),
    /// The element type's name, for errors.
    type_name: &'static str,
}

/// # Safety
/// `p` must come from `Box::<Option<T>>::into_raw` and not be freed.
unsafe fn clear_slot<T>(p: NonNull<()>) {
    // SAFETY: per the function's contract `p` is a live `Option<T>`; the interpreter holds no
    // other reference to it while a cold path runs.
    unsafe { *p.cast::<Option<T>>().as_ptr() = None }
}

/// # Safety
/// `p` must come from `Box::<Option<T>>::into_raw`, and is not used afterwards.
unsafe fn free_slot<T>(p: NonNull<()>) {
    // SAFETY: per the function's contract `p` is the pointer of a boxed `Option<T>` that is
    // freed exactly once (in `Core::drop`).
    drop(unsafe { Box::from_raw(p.cast::<Option<T>>().as_ptr()) })
}

/// A connection's port list entry: `OUTLET_BIT` marks out-ports.
const OUTLET_BIT: u32 = 1 << 31;

/// Counters for tests and benchmarks (they cost one increment each on the paths they count).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Events dequeued from the ring (each uses one unit of budget).
    pub dequeued: u64,
    /// Pushes and pulls processed by chasing (no enqueue, no dequeue).
    pub chased: u64,
    /// Asynchronous inputs run ([`Interpreter::run_async_input`]).
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
    conns: Vec<Conn>,
    slot_ops: Vec<SlotOps>,
    /// Failures in flight: (connection, error), taken when the failure is decoded.
    failures: Vec<(u32, Error)>,
    /// Per stage: ports still open, with `KEEP_GOING`.
    shutdown: Vec<u32>,
    /// Per stage: finalised.
    finalised: Vec<bool>,
    /// Per stage: the start of its ports in `port_list` (`stages + 1` entries).
    port_start: Vec<u32>,
    /// Every stage's ports, connection indices, `OUTLET_BIT` for out-ports.
    port_list: Vec<u32>,
    /// The event ring: connection indices.
    queue: Box<[u32]>,
    mask: u32,
    head: u32,
    tail: u32,
    chased_push: u32,
    chased_pull: u32,
    chase_counter: u64,
    /// The stage whose handler runs (or ran last).
    active: u32,
    pending_finalizations: u32,
    running: u32,
    gate: bool,
    fuzz: Option<u64>,
    pub(crate) mailbox: Arc<Mailbox>,
    stats: Stats,
    names: Vec<&'static str>,
    /// Stages whose [`Stage::on_park`] runs when the island's run ends, in registration order.
    park_hooks: Vec<u32>,
    /// Per stage: in `park_hooks`.
    hooked: Vec<bool>,
}

// SAFETY: the raw `slot` pointers point into allocations owned by this `Core` alone (made in
// `GraphBuilder::connection`, freed in `Drop`), holding `Option<T>` with `T: Send` (checked by
// `connection`'s bound); moving the `Core` to another thread moves that ownership along, like
// a `Box<Option<T>>` would.
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
struct DropSlot(unsafe fn(NonNull<()>), NonNull<()>);

impl Drop for DropSlot {
    fn drop(&mut self) {
        // SAFETY: built only in `Core::drop`, once per connection, from the slot pointer and
        // the matching `free_slot::<T>`; nothing uses the pointer afterwards.
        unsafe { (self.0)(self.1) }
    }
}

/// The context a handler gets: its ports, its stage, the island.
///
/// See the [stage module](super::stage) for what each operation means; the rules are Pekko's
/// `GraphStageLogic` rules. Misuse — pushing twice or before a pull, pulling twice or a closed
/// port, grabbing an empty port, a port of another element type — fails the stage with
/// [`IslandError::PortMisuse`], never anything worse.
pub struct Ctx<'a> {
    core: &'a mut Core,
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
fn pull_refused(c: u32, st: u32) {
    if st & IN_CLOSED != 0 {
        misuse("pull", c, "the port is closed");
    } else if st & IN_READY == 0 {
        misuse("pull", c, "pulled twice");
    }
}

#[cold]
#[inline(never)]
fn misuse(op: &'static str, port: u32, reason: &'static str) -> ! {
    std::panic::panic_any(IslandError::PortMisuse { op, port, reason })
}

impl Core {
    #[inline]
    fn enqueue(&mut self, c: u32) {
        debug_assert!(
            self.tail.wrapping_sub(self.head) <= self.mask,
            "more than one pending event per connection"
        );
        self.queue[(self.tail & self.mask) as usize] = c;
        self.tail = self.tail.wrapping_add(1);
    }

    #[inline]
    fn dequeue(&mut self) -> Option<u32> {
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
    fn chase<const PUSH: bool>(&mut self, c: u32) {
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
    fn slot<T: 'static>(&mut self, c: u32, op: &'static str) -> &mut Option<T> {
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
    fn complete_connection(&mut self, stage: u32) {
        let s = stage as usize;
        let count = self.shutdown[s];
        if count & !KEEP_GOING > 0 {
            self.shutdown[s] = count - 1;
            if count - 1 == 0 {
                self.pending_finalizations += 1;
            }
        }
    }

    fn complete_out(&mut self, c: u32) {
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

    fn fail_out(&mut self, c: u32, error: Error) {
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

    fn cancel_in(&mut self, c: u32) {
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

    fn ports_of(&self, stage: u32) -> std::ops::Range<usize> {
        self.port_start[stage as usize] as usize..self.port_start[stage as usize + 1] as usize
    }

    /// Completes (or fails) every out-port of `stage` and cancels every in-port.
    fn close_stage(&mut self, stage: u32, error: Option<&Error>) {
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

    fn set_keep_going(&mut self, stage: u32, enabled: bool) {
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
    fn push_refused(&mut self, c: u32, st: u32, ty: TypeId) {
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

    /// Asks for this stage's [`on_park`](Stage::on_park) to run each time the island's run
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
    /// [`on_async_input`](Stage::on_async_input) then runs on the island.
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

/// Why a graph could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A connection's in-port or out-port is declared by no stage.
    #[error("connection {connection}: its {side} is declared by no stage")]
    Unconnected {
        /// The connection index.
        connection: u32,
        /// `"inlet"` or `"outlet"`.
        side: &'static str,
    },
    /// A port is declared by two stages, or twice by one.
    #[error("connection {connection}: its {side} is declared twice")]
    DeclaredTwice {
        /// The connection index.
        connection: u32,
        /// `"inlet"` or `"outlet"`.
        side: &'static str,
    },
    /// A stage declared a port that this builder did not make.
    #[error("connection {connection} does not exist in this graph")]
    UnknownPort {
        /// The connection index.
        connection: u32,
    },
    /// A flow with async boundaries runs on several islands (use `Flow::into_islands`).
    #[error("the flow runs on {islands} islands (it has async boundaries): use into_islands")]
    SeveralIslands {
        /// How many.
        islands: usize,
    },
    /// A boundary's input side was materialised already (a boundary has one consumer).
    #[error("the boundary input was materialised already (a boundary has one consumer)")]
    AlreadyMaterialised,
    /// An erased port was re-typed with another element type.
    #[error("connection {connection} carries {expected}, not {asked}")]
    WrongType {
        /// The connection index.
        connection: u32,
        /// The connection's element type.
        expected: &'static str,
        /// The type asked for.
        asked: &'static str,
    },
}

/// Builds a graph of stages for an [`Interpreter`]: make connections, hand their ends to
/// stages, add the stages.
///
/// # Examples
///
/// ```
/// use rs_impl::island::{stages, GraphBuilder};
///
/// let mut g = GraphBuilder::new();
/// let (src_out, map_in) = g.connection::<u32>();
/// let (map_out, sink_in) = g.connection::<u32>();
/// let (sink, seen) = stages::CollectSink::new(sink_in);
/// g.add_stage(rs_impl::flow::IterSource::new(src_out, 1..=3u32));
/// g.add_stage(rs_impl::flow::OperatorStage::new(map_in, map_out, rs_impl::flow::ops::Map::new(|x: u32| x * 10)));
/// g.add_stage(sink);
/// let mut interpreter = g.build().unwrap();
/// interpreter.init();
/// interpreter.execute(u64::MAX);
/// assert!(interpreter.is_completed());
/// assert_eq!(seen.take().unwrap().unwrap(), vec![10, 20, 30]);
/// ```
pub struct GraphBuilder {
    conns: Vec<Conn>,
    slot_ops: Vec<SlotOps>,
    /// Stage `i`.
    stages: Vec<Box<dyn Stage>>,
    port_start: Vec<u32>,
    port_list: Vec<u32>,
    error: Option<BuildError>,
}

impl fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphBuilder")
            .field("connections", &self.conns.len())
            .field("stages", &self.stages.len())
            .finish()
    }
}

impl Drop for GraphBuilder {
    fn drop(&mut self) {
        // Slots not handed to an interpreter are freed here.
        for (conn, ops) in self.conns.drain(..).zip(self.slot_ops.drain(..)) {
            report::drop_guarded(DropSlot(ops.free, conn.slot));
        }
    }
}

impl GraphBuilder {
    /// An empty graph.
    ///
    /// # Examples
    ///
    /// ```
    /// let g = rs_impl::island::GraphBuilder::new();
    /// assert_eq!(g.stage_count(), 0);
    /// ```
    pub fn new() -> Self {
        GraphBuilder {
            conns: Vec::new(),
            slot_ops: Vec::new(),
            stages: Vec::new(),
            port_start: vec![0],
            port_list: Vec::new(),
            error: None,
        }
    }

    /// Makes a connection for elements of type `T`: its out-port and its in-port, to hand to
    /// two stages.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (out, inlet) = g.connection::<String>();
    /// assert_eq!(out.id(), inlet.id());
    /// ```
    pub fn connection<T: Send + 'static>(&mut self) -> (Outlet<T>, Inlet<T>) {
        let id = u32::try_from(self.conns.len()).expect("fewer than 2^31 connections");
        assert!(id < OUTLET_BIT && id != NO_EVENT, "too many connections");
        let slot = NonNull::from(Box::leak(Box::new(None::<T>))).cast::<()>();
        self.conns.push(Conn {
            state: IN_READY,
            in_owner: NO_STAGE,
            out_owner: NO_STAGE,
            type_id: TypeId::of::<T>(),
            slot,
        });
        self.slot_ops.push(SlotOps {
            clear: clear_slot::<T>,
            free: free_slot::<T>,
            type_name: std::any::type_name::<T>(),
        });
        (
            Outlet {
                id,
                _t: PhantomData,
            },
            Inlet {
                id,
                _t: PhantomData,
            },
        )
    }

    /// Re-types the in-port of connection `id` (for builders that keep ports erased).
    ///
    /// # Errors
    ///
    /// [`BuildError::UnknownPort`] or [`BuildError::WrongType`].
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (_, inlet) = g.connection::<u8>();
    /// assert_eq!(g.inlet::<u8>(inlet.id()).unwrap(), inlet);
    /// assert!(g.inlet::<u16>(inlet.id()).is_err());
    /// ```
    pub fn inlet<T: 'static>(&self, id: PortId) -> Result<Inlet<T>, BuildError> {
        self.check_type::<T>(id.0)?;
        Ok(Inlet {
            id: id.0,
            _t: PhantomData,
        })
    }

    /// Re-types the out-port of connection `id`.
    ///
    /// # Errors
    ///
    /// [`BuildError::UnknownPort`] or [`BuildError::WrongType`].
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (out, _) = g.connection::<u8>();
    /// assert_eq!(g.outlet::<u8>(out.id()).unwrap(), out);
    /// ```
    pub fn outlet<T: 'static>(&self, id: PortId) -> Result<Outlet<T>, BuildError> {
        self.check_type::<T>(id.0)?;
        Ok(Outlet {
            id: id.0,
            _t: PhantomData,
        })
    }

    fn check_type<T: 'static>(&self, c: u32) -> Result<(), BuildError> {
        let conn = self
            .conns
            .get(c as usize)
            .ok_or(BuildError::UnknownPort { connection: c })?;
        if conn.type_id != TypeId::of::<T>() {
            return Err(BuildError::WrongType {
                connection: c,
                expected: self.slot_ops[c as usize].type_name,
                asked: std::any::type_name::<T>(),
            });
        }
        Ok(())
    }

    /// Adds a stage, which declares its ports through [`Stage::ports`]; returns its index.
    /// A declaration error is kept and returned by [`build`](Self::build).
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder`].
    pub fn add_stage<S: Stage + 'static>(&mut self, stage: S) -> u32 {
        self.add_boxed(Box::new(stage))
    }

    /// Adds a boxed stage (see [`add_stage`](Self::add_stage)).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::island::{stages, GraphBuilder, Stage};
    /// let mut g = GraphBuilder::new();
    /// let (out, inlet) = g.connection::<u8>();
    /// let boxed: Box<dyn Stage> = Box::new(rs_impl::flow::OperatorStage::new(inlet, out, rs_impl::flow::ops::Identity::new()));
    /// assert_eq!(g.add_boxed(boxed), 0);
    /// ```
    pub fn add_boxed(&mut self, stage: Box<dyn Stage>) -> u32 {
        let mut ports = Ports::default();
        stage.ports(&mut ports);
        let index = self.next_index();
        self.declare(index, &ports.inlets, &ports.outlets);
        self.stages.push(stage);
        index
    }

    fn next_index(&self) -> u32 {
        u32::try_from(self.stages.len()).expect("fewer than 2^32 stages")
    }

    /// Declares the ports of stage `index`, the next one in the port list.
    fn declare(&mut self, index: u32, inlets: &[u32], outlets: &[u32]) {
        for &c in inlets {
            self.own(c, index, false);
            self.port_list.push(c);
        }
        for &c in outlets {
            self.own(c, index, true);
            self.port_list.push(c | OUTLET_BIT);
        }
        self.port_start
            .push(u32::try_from(self.port_list.len()).expect("fewer than 2^32 ports"));
    }

    fn own(&mut self, c: u32, stage: u32, outlet: bool) {
        let side = if outlet { "outlet" } else { "inlet" };
        let Some(conn) = self.conns.get_mut(c as usize) else {
            self.error
                .get_or_insert(BuildError::UnknownPort { connection: c });
            return;
        };
        let owner = if outlet {
            &mut conn.out_owner
        } else {
            &mut conn.in_owner
        };
        if *owner != NO_STAGE {
            self.error.get_or_insert(BuildError::DeclaredTwice {
                connection: c,
                side,
            });
        }
        *owner = stage;
    }

    /// The number of stages added so far.
    ///
    /// # Examples
    ///
    /// See [`GraphBuilder::new`].
    pub fn stage_count(&self) -> usize {
        self.stages.len()
    }

    /// Builds the interpreter (not started: call [`Interpreter::init`]).
    ///
    /// # Errors
    ///
    /// The first declaration error, or [`BuildError::Unconnected`] for a port no stage owns.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let _ = g.connection::<u8>();
    /// assert!(g.build().is_err()); // nobody owns either end
    /// ```
    pub fn build(mut self) -> Result<Interpreter, BuildError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (i, conn) in self.conns.iter().enumerate() {
            let connection = i as u32;
            if conn.in_owner == NO_STAGE {
                return Err(BuildError::Unconnected {
                    connection,
                    side: "inlet",
                });
            }
            if conn.out_owner == NO_STAGE {
                return Err(BuildError::Unconnected {
                    connection,
                    side: "outlet",
                });
            }
        }
        let logics = std::mem::take(&mut self.stages);
        let stages = logics.len();
        let capacity = self.conns.len().max(1).next_power_of_two();
        let mut shutdown = Vec::with_capacity(stages);
        let finalised = vec![false; stages];
        let mut pending = 0;
        for (s, &done) in finalised.iter().enumerate() {
            let ports = self.port_start[s + 1] - self.port_start[s];
            if ports == 0 && !done {
                pending += 1; // a zero-port stage starts completed
            }
            shutdown.push(ports);
        }
        let names = logics.iter().map(|s| s.name()).collect();
        let core = Core {
            conns: std::mem::take(&mut self.conns),
            slot_ops: std::mem::take(&mut self.slot_ops),
            failures: Vec::new(),
            shutdown,
            finalised,
            port_start: std::mem::take(&mut self.port_start),
            port_list: std::mem::take(&mut self.port_list),
            queue: vec![NO_EVENT; capacity].into_boxed_slice(),
            mask: (capacity - 1) as u32,
            head: 0,
            tail: 0,
            chased_push: NO_EVENT,
            chased_pull: NO_EVENT,
            chase_counter: 0,
            active: NO_STAGE,
            pending_finalizations: pending,
            running: stages as u32,
            gate: true,
            fuzz: None,
            mailbox: Arc::new(Mailbox::new(stages)),
            stats: Stats::default(),
            names,
            park_hooks: Vec::new(),
            hooked: vec![false; stages],
        };
        Ok(Interpreter {
            logics: Stages::new(logics, &core.conns),
            core,
            started: false,
        })
    }
}

/// A stage owned through the pointer [`Box::leak`] gave (freed by [`Stages`]'s `Drop`).
type StagePtr = NonNull<dyn Stage>;

/// The stages of an interpreter, owned, and the dispatch table: for every connection the
/// stage owning its in-port and the one owning its out-port, so that an event reaches its
/// handler in one load (connection → stage) instead of two (connection → owner index →
/// stage). That extra dependent load sat on the critical path of every event: the table
/// cuts the interpreter scenario's cost per added hop by about a fifth (see `interpreter`
/// in `benches/`).
///
/// The only `unsafe` of the stage table is here. Every stage is reached through `&mut self`
/// ([`get_mut`](Self::get_mut), [`in_owner`](Self::in_owner), [`out_owner`](Self::out_owner)),
/// so at most one `&mut dyn Stage` exists at a time, and a stage leaves the table only through
/// [`release`](Self::release), which first points every copy of its pointer at [`Released`].
struct Stages {
    /// Stage index → the stage (a finalised stage's entry is a `Released`). Each pointer is
    /// freed once, in `Drop`.
    own: Vec<StagePtr>,
    /// Connection → [the stage owning its in-port, the stage owning its out-port]: copies of
    /// `own` entries, never freed through this table.
    targets: Vec<[StagePtr; 2]>,
    /// Loom builds only: `release` runs the stage's `post_stop` and then forgets it (the broken
    /// twin of the stage table's loom model: the stage's state is never dropped).
    #[cfg(rs_loom)]
    broken_release: bool,
}

// SAFETY: `Stages` owns the stages behind `own` as the `Box<dyn Stage>` they came from did
// (`Stage: Send`), and `targets` only copies those pointers; moving the table to another
// thread moves that ownership along, and nothing else refers to the stages.
unsafe impl Send for Stages {}

/// A `Released`, leaked: a zero-sized type, so this allocates nothing.
fn released() -> StagePtr {
    let b: Box<dyn Stage> = Box::new(Released);
    NonNull::from(Box::leak(b))
}

impl Stages {
    /// Takes ownership of `stages`; `conns` name each connection's two owners (all set, as
    /// `build` checks, except inside a fused run, whose connections have none and carry no
    /// event: their entries point at a `Released`).
    fn new(stages: Vec<Box<dyn Stage>>, conns: &[Conn]) -> Stages {
        let own: Vec<StagePtr> = stages
            .into_iter()
            .map(|b| NonNull::from(Box::leak(b)))
            .collect();
        let owner = |s: u32| own.get(s as usize).copied().unwrap_or_else(released);
        let targets = conns
            .iter()
            .map(|c| [owner(c.in_owner), owner(c.out_owner)])
            .collect();
        Stages {
            own,
            targets,
            #[cfg(rs_loom)]
            broken_release: false,
        }
    }

    fn len(&self) -> usize {
        self.own.len()
    }

    /// Stage `s` (panics when there is no such stage).
    #[inline(always)]
    fn get_mut(&mut self, s: usize) -> &mut dyn Stage {
        // SAFETY: `own[s]` came from `Box::leak` and is freed only in `Drop` (a released
        // stage's box is freed by `release`'s caller only after its entry was replaced); the
        // returned borrow holds `&mut self`, so no other reference to any stage is alive.
        unsafe { &mut *self.own[s].as_ptr() }
    }

    /// The stage owning the in-port of connection `c`.
    #[inline(always)]
    fn in_owner(&mut self, c: u32) -> &mut dyn Stage {
        // SAFETY: `targets[c][0]` is a copy of the live `own` entry of the in-port's owner
        // (set in `new`, replaced with `release`'s `Released` before that stage's box leaves);
        // the returned borrow holds `&mut self`, so no other reference to any stage is alive.
        unsafe { &mut *self.targets[c as usize][0].as_ptr() }
    }

    /// The stage owning the out-port of connection `c`.
    #[inline(always)]
    fn out_owner(&mut self, c: u32) -> &mut dyn Stage {
        // SAFETY: as in `in_owner`, for the out-port's owner (`targets[c][1]`).
        unsafe { &mut *self.targets[c as usize][1].as_ptr() }
    }

    /// Takes stage `s` out of the table (its entry and every copy of it in `targets` now
    /// point at a `Released`) and hands back its box. `ports` are its port-list entries
    /// (connection indices, `OUTLET_BIT` for out-ports).
    fn release(&mut self, s: usize, ports: &[u32]) -> Box<dyn Stage> {
        let r = released();
        for &p in ports {
            if p & OUTLET_BIT != 0 {
                self.targets[(p & !OUTLET_BIT) as usize][1] = r;
            } else {
                self.targets[p as usize][0] = r;
            }
        }
        let old = std::mem::replace(&mut self.own[s], r);
        // SAFETY: `old` came from `Box::leak` (in `new`) and no copy of it is left: `own[s]`
        // was just replaced, and so was every `targets` entry naming stage `s` (each port has
        // one owner, which `build` checked, and `ports` are all of stage `s`'s ports).
        let b = unsafe { Box::from_raw(old.as_ptr()) };
        #[cfg(rs_loom)]
        if self.broken_release {
            // The caller's post_stop reaches the stage; its box is then lost.
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
            // replaced, not duplicated, the entries it took); `targets` holds copies only.
            let b = unsafe { Box::from_raw(p.as_ptr()) };
            report::drop_guarded(b);
        }
    }
}

/// The interpreter of one island: runs its stages' handlers for the events on their ports.
///
/// See the [module documentation](self) for the model. Single-threaded: it is driven by one
/// caller at a time (an [`Island`](super::Island) on an executor, or a test), and is `Send`.
pub struct Interpreter {
    /// The stages; a finalised stage's slot holds [`Released`] (its state was dropped).
    logics: Stages,
    core: Core,
    started: bool,
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
                let ports = &self.core.port_list[self.core.ports_of(s as u32)];
                let mut logic = self.logics.release(s, ports);
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
    /// See [`GraphBuilder`].
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
    /// See [`GraphBuilder`].
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
    fn run<const GATED: bool>(&mut self, remaining: &mut u64) {
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
            while self.core.chased_push != NO_EVENT {
                let c = self.core.chased_push;
                self.core.chased_push = NO_EVENT;
                self.process_push(c);
                self.after_event::<GATED>();
            }
            while self.core.chased_pull != NO_EVENT {
                let c = self.core.chased_pull;
                self.core.chased_pull = NO_EVENT;
                self.process_pull(c);
                self.after_event::<GATED>();
            }
            if self.core.chased_push != NO_EVENT {
                let c = self.core.chased_push;
                self.core.chased_push = NO_EVENT;
                self.core.enqueue(c);
                self.core.stats.chased = self.core.stats.chased.wrapping_sub(1);
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
    fn after_event<const GATED: bool>(&mut self) {
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
    fn after_stage_has_run(&mut self, stage: u32) {
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
    fn finalise_pending(&mut self) {
        let active = self.core.active;
        self.after_stage_has_run(active);
    }

    /// Scans every stage while finalisations are pending (post_stop may complete more).
    fn scan_pending(&mut self) {
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
    fn finalise(&mut self, stage: u32) {
        let s = stage as usize;
        debug_assert!(!self.core.finalised[s] && self.core.shutdown[s] == 0);
        self.core.finalised[s] = true;
        self.core.pending_finalizations -= 1;
        self.core.running -= 1;
        self.core.stats.finalised += 1;
        let ports = &self.core.port_list[self.core.ports_of(stage)];
        let mut logic = self.logics.release(s, ports);
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
    fn process_push(&mut self, c: u32) {
        let conn = &mut self.core.conns[c as usize];
        conn.state ^= PUSH_END;
        let owner = conn.in_owner;
        self.core.active = owner;
        self.logics.in_owner(c).on_push(
            PortId(c),
            &mut Ctx {
                core: &mut self.core,
            },
        );
    }

    #[inline(always)]
    fn process_pull(&mut self, c: u32) {
        let conn = &mut self.core.conns[c as usize];
        conn.state ^= PULL_END;
        let owner = conn.out_owner;
        self.core.active = owner;
        self.logics.out_owner(c).on_pull(
            PortId(c),
            &mut Ctx {
                core: &mut self.core,
            },
        );
    }

    /// Decodes and runs one dequeued event: PUSH and PULL inline (the hot cases), the rest
    /// out of line.
    #[inline(always)]
    fn process_event(&mut self, c: u32) {
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
    fn process_close(&mut self, c: u32, st: u32) {
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
    fn stage_panicked(&mut self, payload: Box<dyn Any + Send>) {
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

    /// Runs `stage`'s [`on_async_input`](Stage::on_async_input) (events from outside the
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

    /// Runs [`Stage::on_park`] of every stage that asked for it (with
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
    /// See [`GraphBuilder`].
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
    pub fn set_fuzzing(&mut self, seed: Option<u64>) {
        self.core.fuzz = seed.map(|s| s | 1);
    }

    /// Loom builds only: breaks the stage table on purpose, for the broken twin of its loom
    /// model — a finalised stage is forgotten instead of dropped.
    #[cfg(rs_loom)]
    #[doc(hidden)]
    pub fn break_stage_table_for_loom(&mut self) {
        self.logics.broken_release = true;
    }

    pub(crate) fn mailbox(&self) -> &Arc<Mailbox> {
        &self.core.mailbox
    }
}

/// What stands in a finalised stage's place: no ports, and every event ignored (none can
/// reach it: its ports are all closed). A zero-sized type, so putting it in a `Box` does not
/// allocate.
struct Released;

impl Stage for Released {
    fn ports(&self, _: &mut Ports) {}
    fn on_push(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_pull(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_upstream_finish(&mut self, _: PortId, _: &mut Ctx<'_>) {}
    fn on_upstream_failure(&mut self, _: PortId, _: Error, _: &mut Ctx<'_>) {}
    fn on_downstream_finish(&mut self, _: PortId, _: &mut Ctx<'_>) {}
}

/// Clears one slot when dropped (so `drop_guarded` can contain a panicking element drop).
struct ClearSlot(unsafe fn(NonNull<()>), NonNull<()>);

impl Drop for ClearSlot {
    fn drop(&mut self) {
        // SAFETY: built only in `Interpreter::finalise` from a connection's slot and its own
        // type's `clear`, with `&mut` access to the interpreter (no reference to the slot).
        unsafe { (self.0)(self.1) }
    }
}

impl Default for GraphBuilder {
    fn default() -> Self {
        GraphBuilder::new()
    }
}
