//! The fused-stage interpreter (Pekko PR #2986 and Pekko's `GraphInterpreter` with #2985, #2986 and
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
//!   made, reached through a raw pointer. A typed access ([`Ctx::push`], [`Ctx::grab`]) checks
//!   that its handle belongs to this interpreter's graph: only a graph's builder makes its
//!   handles, each for one of its connections and with that connection's element type (the
//!   connection's `TypeId` is checked where an erased port is re-typed), so that one
//!   comparison stands for the bounds check and the `TypeId` comparison each access made
//!   before. Elements are never boxed per hop; the interpreter schedules connection indices
//!   only.
//! * its two owners (stage indices), and its dispatch entry: pointers to the two owners'
//!   entries in the stage table, written and read only by the stage table. An event reaches
//!   its handler from the connection the loop has already looked up for its state, with no
//!   second lookup by index (the owner index stays for everything else).
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
//! # What an event costs
//!
//! Measured for issue 24 (`interpreter` scenario, one identity stage: an iterator source, the
//! stage and a sink, three stages wired port to port, four events per element — a pull and a
//! push on each of the two connections), counted with callgrind (`interp_prof interpreter 1
//! N`, instructions per element from the difference of `N` = 100,000 and 200,000, so the
//! set-up cancels):
//!
//! | | instructions per element |
//! |---|---|
//! | before (Pekko's two chase loops; the iterator source through the segment's `drive`) | 438 |
//! | one chase loop (below) | 398 |
//! | and the segment's one-pull paths (`Segment::on_pull`: a source into an out-port pumps one element without `drive`'s batch loop; a stage between two ports passes the pull on with one look at the port) | 383 |
//! | and no stall check after the iterator source's one-element pump (its pump reports the end with the last element, so the check could only say "wait") | 369 |
//! | and the dispatch entry in the connection (a pointer to each owner's entry in the stage table: one bounds check per event, where a table of copies beside the connections cost two bounds checks and two base loads) | 349 (353 on the compiler of 2026-12-03) |
//! | and the segment's "ending" and "done" in one byte (one test in the hot handlers), "did that push fill the out-port?" answered by the chase slot (a push waiting there has not been processed, so its port is full: one load, where asking the port again cost a bounds check and a state check), and the iterator's one-element pump writing its read-ahead straight back (`IterEntry::pump_one`) | 329 |
//! | and connections aligned to 64 bytes (below: more instructions, less time) | **338** |
//!
//! At five identity stages: 1,001 before the last two rows, then 924, and 952 now; at ten:
//! 2,022 at first, 1,932 with the one chase loop, 1,808 (1,812) with the dispatch entry, 1,667,
//! and 1,720 now (152 per added hop, from 162). The fused paths that share the segment code did
//! not move (`interp_prof flow 1 N` and `user-op`: 44.6 at one hop, 63.7 at ten, before and
//! after).
//!
//! Tried and not kept:
//! * no bounds check where the event loop takes a connection from the queue or a chase slot
//!   (every index there was bounds-checked when it went in; `get_unchecked` behind an `unsafe
//!   fn`): 329 → 316 at one stage, 1,667 → 1,596 at ten;
//! * port handles that carry their graph's number (a 64-bit id per builder), so that a push or
//!   a grab compares it once in place of a bounds check and a `TypeId` comparison and then
//!   reaches the connection unchecked: 316 → 304, 1,596 → 1,529 (the handles grew from 4 to
//!   16 bytes);
//!
//!   together 25 instructions per element at one stage (7 %), but `unsafe` that the clock did
//!   not show paying: timed against the code before them they moved the medians by −3 % to
//!   +12 %, inside this machine's noise (see below), so they were taken out again (the
//!   project's rule: unsafe only where a benchmark shows it pays);
//! * `Ctx` as a transparent wrapper of the interpreter's core (a handler gets the core's
//!   pointer, no context built per event): 303 at k = 1 (with the two above) but 863 and
//!   1,562 at five and ten — the handlers then reload more;
//! * the rare paths of the segment's `on_pull` out of line (to shrink the iterator source's
//!   prologue, which saves and restores six registers): 319, the prologue stayed.
//!
//! In time the cut is smaller than in instructions. The code of this table's last two rows
//! against the code before them (`interp_prof interpreter K N`, 20 M elements ÷ K per run, the
//! two binaries alternated 8 times each under the bench lock, 2026-12-03 20:26Z, on the
//! 2-core machine with one other helper's work beside: load 3.5), in M elements per second,
//! median (best):
//!
//! | stages | before | now | medians |
//! |---|---|---|---|
//! | 1 | 30.4 (33.3) | 34.7 (36.3) | +14 % |
//! | 5 | 9.4 (10.7) | 11.8 (12.2) | +25 % |
//! | 10 | 5.5 (6.0) | 6.2 (6.5) | +13 % |
//!
//! The rows that took out work beside the chain of loads each event waits on (bounds checks,
//! `TypeId` comparisons, a second look at a port) moved the clock far less than their
//! instruction counts: a wide core did that work in parallel already. The time per event
//! follows the chain — the chase slot, then the connection, then the owner's entry, then the
//! stage and the indirect call; then the handler's port, its connection and its state.
//! Hence the last row: a connection of 56 bytes was found by a multiplication of its index
//! (three cycles, twice per event on that chain: in the loop and in the handler); aligned to
//! 64 it is found by a shift (one cycle), at the price of a register copy beside each shift
//! (+9 instructions per element at one stage, +54 at ten). Timed against the row before (11
//! runs each, alternated): +8 % at one stage and +5 % at ten — the one change here that the
//! clock shows beyond its noise. Issue 24 asks for 60 M elements per second at one stage:
//! with about 35 (36 at best) on this machine, this shape is not there.
//!
//! Where the instructions go (counted with the two unsafe rows in, 304 before the alignment;
//! without them each push and grab costs its bounds check and `TypeId` comparison again, in
//! place of the graph check named here): the iterator source's `on_pull` about 79
//! (its prologue and epilogue 16, the port's state, the iterator's read-ahead, the push with
//! its state check and graph check, the chase), the identity stage's `on_push` 63 (a grab and a
//! push, each a graph check and a state check, the grab's `Option` take, the operator
//! contract's state, the chase slot's answer, and a prologue of five registers) and `on_pull`
//! 30 (the segment's state, then the pull: a bounds check — a pull touches no element, so the
//! plain bounds check is as cheap as the graph check — and the chase), the benchmark's sink 46,
//! and the event loop 86: about 17 per chased push and 21 per chased pull (the chase slots, the
//! connection's state transition, the owner's pointer through the connection's dispatch entry,
//! one indirect `dyn Stage` call that is not inlined, the finalisation gate) and about 56 per
//! dequeued one (one event in 17).
//! None of them dominates: a hop between two interpreter stages costs four handler calls and
//! their port checks, which is why a fused segment — a chain of direct calls with no event
//! between operators, about 2 ns per added hop — is the way to make a flow cheap (the same
//! element through `Flow::from_iter(..).identity()` into `for_each`, one segment: 45
//! instructions, `interp_prof flow 1 N`). Going much below this with a stage per hop would
//! take fewer events per element (this shape needs four: Pekko's), or a shorter chain of
//! loads per event (the owner's entry is one link of it: copies of the stage pointers in the
//! connection would cut it, but make the connections name the stage type), not fewer
//! instructions: what each event checks is close to what the port rules ask for.
//! The hand-written stages of the first interpreter (before the flow's parts became
//! segments) did the same work in fewer checks; the segment keeps one operator contract for
//! every part, which is what its state flags pay for.
//!
//! # Chasing
//!
//! A push or pull made inside a handler goes into the single `chased_push` / `chased_pull`
//! slot when the chase counter is positive and the slot is free, and is then processed right
//! after the handler, with no enqueue, dequeue or decode. One loop takes the chased events of
//! both kinds (a push first): a push made while chasing a pull — a source answering its
//! downstream's pull — is chased too, where Pekko's loop, which runs the pushes and then the
//! pulls, sends it back to the queue. So a linear chain dequeues one event per chase limit,
//! not one per element (`tests/interpreter_costs.rs` counts it). The counter is reset to
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

mod build;
mod core;
mod run;
mod table;

pub use self::build::{BuildError, GraphBuilder};

pub use self::core::{Ctx, Stats};
pub(crate) use self::run::panic_error;
pub use self::run::Interpreter;
