//! Loom models of `rs-impl`'s building blocks and publishers.
//!
//! Compiled only in the loom build and run with
//! `CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg rs_loom" LOOM_MAX_PREEMPTIONS=2
//! cargo test --release --test loom -p rs-impl -- --test-threads=1` (see `scripts/loom.sh`).
//!
//! Every model opens with the rule it checks and the interleaving it aims at, and runs the real
//! types (`Demand`, `DrainLoop`, the cold sources, the ready-made subscribers). Every model also
//! has a deliberately broken twin (in [`broken`], all named `Broken…`) and a test asserting that
//! loom rejects it, with the expected message: a model that cannot fail proves nothing.
//!
//! | file | model | rules |
//! |---|---|---|
//! | `demand.rs` | concurrent requests add up and saturate | 1.1, 3.8, 3.17 |
//! | `drain.rs` | concurrent `request` racing a re-entrant one | 1.3, 3.3, no lost wake-up |
//! | `handoff.rs` | a serial producer handing values to the drainer (`try_drain_with`) racing a drain | no lost value, order kept |
//! | `cancel.rs` | cancel racing emission, twice, then a request | 1.8, 3.5–3.7, 3.12, 3.13 |
//! | `terminal.rs` | completion / error racing an in-flight `on_next` | 1.7, 1.6, 3.9 |
//! | `calls.rs` | the subscriber's `request` racing its handle's `cancel` | 2.7, 3.6, 3.7 |
//! | `calls.rs` | `Handle::wait` racing the completion on another thread (twin: a waiter counted after letting the lock go, which the outcome, notifying only counted waiters, never wakes) | no lost wake-up |
//! | `on_subscribe.rs` | two threads deliver `on_subscribe` at once | 2.5 |
//! | `on_subscribe.rs` | `Handle::cancel` racing `on_subscribe` (found a lost cancel, fixed) | 3.12, 2.6 |
//! | `fanout.rs` | join and cancel racing publish; requests from two threads; completion racing a late join; async send racing a request; a blocked sender racing a request (the drainer's credit handed back); a burst racing a request | 1.1, 1.3, 1.5, 3.13, no lost wake-up, no leak |
//! | `island.rs` | a request racing the island's park; cancel racing completion; cancel of a parked island (twins: a blind park, a silent post, a queued flag cleared with a store — the lost cancel this model found) | 3.4, 1.1, no lost wake-up, 1.7, 1.8, 3.5–3.7, 3.13 |
//! | `island.rs` | the island input side's replenishing request racing the upstream's completion on another thread (twin: the one rule-2.4 guard broken: a plain look for the end, no wait) | 2.4, 1.1, 1.5 |
//! | `island.rs` | the interpreter's stage table (raw-pointer owned stages, a per-connection dispatch table): run partly, moved to another thread, finished or dropped there (twin: a release that forgets the stage) | `post_stop` once, state dropped once, `Send` |
//! | `boundary.rs` | two islands joined by a ring of 2: a flush racing a cancel (twin: a cancel that forgets the buffered input), the completion after a batch (twin: completion before the last flush), an error overtaking buffered input (twin: an error that waits for demand), the consumer's grant racing the producer's park (twin: the grant stored after its notification) | 1.1, 1.4, 1.5, 1.7, 1.8, 3.12, 3.13, no leak, no lost wake-up |
//! | `push.rs` | the push source: a sender blocked for want of demand racing requests from another thread, its sends racing their drains (the inbox); a send racing `complete` from a clone (twin: a send that ignores the end) | no lost wake-up, 1.1, 1.3, every element once in order, nothing accepted and dropped |
//! | `ring.rs` | the hand-off ring through the stream bridge: a ring of 1 wrapping with every slot reused, the consumer's park racing each publication (twin: a park without the comparison); the consumer leaving with elements in flight (twin: a leave that forgets the buffer); the consumer leaving while the subscription is handed over (twin: a hand-over that ignores the leave) | no lost wake-up, every element moved out once, no leak, no double drop, 3.13 |
//! | `lanes.rs` | keyed lanes, 2 lanes of capacity 1: a full lane racing the upstream's next element (twin: a full lane that drops it); the lanes' subscribers cancelling while the lanes drain (twin: a leave that forgets a lane's buffer); merged lanes completing after the last lane drained (twin: completion on the first lane) | 1.1, 1.5, 1.7, 3.13, each key's order, no loss, no leak, no lost wake-up |
//! | `merge.rs` | merge of two hand-driven inners (prefetch 1–2): cancel from inside `on_next` racing the other inner's `on_next` (twin: a drain that ignores the cancel); an inner's completion racing the outer's; two inners racing one drain with one-by-one demand (twin: a fast path past the inner's queue); a subscribed inner pulled by `subscribe` while another thread cancels (twin: the ended drain keeps the inner, which is subscribed to and never cancelled); an inner's element and end racing the visit that admits it (twin: the queue looked at before the end); the ready list: an element queued while the drain visits its inner (twin: the inner's flag cleared after the visit, the element never listed) | 1.8, 3.13, 1.5, 1.3, each inner's order, nothing lost, no leak |
//! | `rsocket.rs` | the RSocket connection's stream table: a CANCEL racing a PAYLOAD (twin: a cancel that skips the drain), a REQUEST_N racing the served publisher's completion (twin: the rule-2.4 guard broken), a stream opened while the connection closes (twin: an open that ignores the close), a cancel racing the writer's open (twin: an open that ignores the cancel) | 3.13, 2.4, one terminal per stream, the table emptied |
//! | `stream.rs` | publisher → `Stream`: the stream's waker racing `on_next`/`on_complete` from another thread | no lost wake-up, 1.3, every element once |
//! | `stream.rs` | the stream's replenishing request racing `on_complete` from another thread (twin: a plain look for the end, no wait) | 2.4 |
//! | `stream.rs` | loom 0.7.3's own imprecision (a swap that misses a store which happened-before it), kept as a rejects-test | — |
#![cfg(rs_loom)]
// Tests use std `Arc`/`Weak` drop tokens next to the facade's loom types.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod boundary;
mod broken;
mod calls;
mod cancel;
mod demand;
mod drain;
mod fanout;
mod handoff;
mod island;
mod lanes;
mod merge;
mod on_subscribe;
mod probe;
mod push;
mod ring;
#[cfg(feature = "rsocket")]
mod rsocket;
mod stream;
mod terminal;

/// Runs `model` exhaustively (no preemption bound, whatever `LOOM_MAX_PREEMPTIONS` says), for
/// models small enough to afford it (each takes about a second).
pub(crate) fn exhaustive<F>(model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = None;
    builder.check(model);
}

/// Declares a test asserting that loom rejects `$model` (a broken variant's model) with a
/// failure whose output contains `$expected` (the rule of the assertion that must fire).
///
/// The model runs in a child process (this test binary, filtered to this one test): a failure
/// found while other loom threads are suspended unwinds their stacks outside the model and
/// aborts the process, which `catch_unwind` cannot contain.
///
/// `exhaustive` before the model runs it with no preemption bound (see [`exhaustive`]), for a
/// bug that needs more preemptions than `LOOM_MAX_PREEMPTIONS` allows. `fault F` before the
/// model switches fault `F` on in the child process (`rs_impl::loom::inject`) before the model
/// runs: the one way a twin breaks the real code.
macro_rules! loom_rejects {
    ($(#[$attr:meta])* $name:ident, $expected:expr, exhaustive $model:expr) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            let path = concat!(module_path!(), "::", stringify!($name));
            let test = path.split_once("::").map_or(path, |(_, rest)| rest);
            rs_impl::loom::assert_rejected(test, $expected, || $crate::exhaustive($model));
        }
    };
    ($(#[$attr:meta])* $name:ident, $expected:expr, fault $fault:expr, $model:expr) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            let path = concat!(module_path!(), "::", stringify!($name));
            let test = path.split_once("::").map_or(path, |(_, rest)| rest);
            rs_impl::loom::assert_rejected(test, $expected, || {
                rs_impl::loom::inject($fault);
                rs_impl::loom::model($model)
            });
        }
    };
    ($(#[$attr:meta])* $name:ident, $expected:expr, $model:expr) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            let path = concat!(module_path!(), "::", stringify!($name));
            let test = path.split_once("::").map_or(path, |(_, rest)| rest);
            rs_impl::loom::assert_rejected(test, $expected, || rs_impl::loom::model($model));
        }
    };
}
pub(crate) use loom_rejects;
