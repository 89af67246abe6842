//! An island as a future: `poll` drains the mailbox, runs the interpreter for a budget of
//! events, and either parks (registers its waker) or yields.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Waker};

use super::interpreter::Interpreter;
use super::mailbox::Mailbox;
use super::port::RunEnd;
use crate::loom::sync::Arc;

/// Dequeued events (and asynchronous inputs) an island processes per `poll` before it yields
/// to its executor, by default.
pub const DEFAULT_BUDGET: u64 = 1024;

/// What an island did, for tests and diagnostics.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct IslandStats {
    /// Times the island was polled.
    pub polls: u64,
    /// Times it parked (nothing to do: waker registered).
    pub parks: u64,
    /// Times it yielded because its budget was spent (it woke itself).
    pub yields: u64,
}

/// An island: stages fused into one [`Interpreter`], run as a `Future<Output = ()> + Send` on
/// any executor. It completes when every stage has been finalised.
///
/// Each `poll` runs the asynchronous inputs posted to its stages (requests, cancels, upstream
/// signals), then the interpreter for at most the island's budget of events. With events left
/// it wakes itself and returns `Pending` (a yield: one endless stream cannot starve the other
/// islands on its worker); with nothing left it parks: registers the waker and returns
/// `Pending`, unless mail arrived meanwhile (see the mailbox protocol in the
/// [module docs](super)). Dropping an unfinished island runs every live stage's `post_stop`
/// and drops it (a subscriber then sees no terminal signal).
///
/// # Examples
///
/// ```
/// use rs_impl::island::{stages, GraphBuilder, Island};
///
/// let mut g = GraphBuilder::new();
/// let (o, i) = g.connection::<u32>();
/// g.add_stage(rs_impl::flow::IterSource::new(o, 0..5u32));
/// let (sink, seen) = stages::CollectSink::new(i);
/// g.add_stage(sink);
/// let island = Island::new(g.build().unwrap());
/// futures::executor::block_on(island);
/// assert_eq!(seen.take().unwrap().unwrap(), vec![0, 1, 2, 3, 4]);
/// ```
#[must_use = "an island does nothing unless it is polled: spawn it on a Runtime"]
pub struct Island {
    interpreter: Interpreter,
    mailbox: Arc<Mailbox>,
    budget: u64,
    /// Reused for the stages with mail (no allocation per poll in steady state).
    scratch: Vec<u32>,
    stats: IslandStats,
    done: bool,
    /// How a yield reschedules the island (see [`Island::with_yielder`]); `None`:
    /// `wake_by_ref`.
    yielder: Option<Yielder>,
    /// Where a flow's publisher spawns it instead of its own runtime (after an
    /// `observe_on`); `None`: the publisher's runtime.
    spawn_on: Option<SpawnOn>,
}

/// Spawns an island somewhere else than its publisher's runtime (`Flow::observe_on`).
pub(crate) type SpawnOn = StdArc<dyn Fn(Island) + Send + Sync>;

/// Reschedules a yielding island behind the other ready tasks of its executor.
pub(crate) type Yielder = StdArc<dyn Fn(Waker) + Send + Sync>;

impl fmt::Debug for Island {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Island")
            .field("interpreter", &self.interpreter)
            .field("budget", &self.budget)
            .field("stats", &self.stats)
            .finish()
    }
}

impl Island {
    /// An island running `interpreter`, with the default budget.
    ///
    /// # Examples
    ///
    /// See [`Island`].
    pub fn new(interpreter: Interpreter) -> Self {
        Island {
            mailbox: interpreter.mailbox().clone(),
            interpreter,
            budget: DEFAULT_BUDGET,
            scratch: Vec::new(),
            stats: IslandStats::default(),
            done: false,
            yielder: None,
            spawn_on: None,
        }
    }

    /// Sets the events processed per `poll` before yielding (at least 1).
    ///
    /// # Examples
    ///
    /// ```
    /// let i = rs_impl::island::Island::new(rs_impl::island::GraphBuilder::new().build().unwrap());
    /// let i = i.with_budget(16);
    /// # drop(i);
    /// ```
    pub fn with_budget(mut self, events: u64) -> Self {
        self.budget = events.max(1);
        self
    }

    /// Sets how a yield reschedules the island. By default it calls `wake_by_ref` from inside
    /// `poll`, which tokio treats as a yield (the task goes to the back of the queue); futures'
    /// `ThreadPool` instead polls such a task again at once, so the default
    /// [`Runtime`](super::Runtime) hands the waker to a task spawned behind the others.
    ///
    pub(crate) fn with_yielder(mut self, yielder: Yielder) -> Self {
        self.yielder = Some(yielder);
        self
    }

    /// Makes a flow's publisher spawn the island with `spawn_on` (after an `observe_on`).
    pub(crate) fn with_spawn_on(mut self, spawn_on: Option<SpawnOn>) -> Self {
        self.spawn_on = spawn_on;
        self
    }

    /// Where the island asks to be spawned, if not on its publisher's runtime.
    pub(crate) fn take_spawn_on(&mut self) -> Option<SpawnOn> {
        self.spawn_on.take()
    }

    /// Runs every stage's `pre_start` now, on the calling thread (otherwise the first `poll`
    /// does). [`FlowPublisher`](crate::flow::FlowPublisher) does this in `subscribe`, so that the
    /// subscriber has its `on_subscribe` before `subscribe` returns; a request made in it is
    /// only posted, and runs on the island.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut i = rs_impl::island::Island::new(rs_impl::island::GraphBuilder::new().build().unwrap());
    /// i.start();
    /// assert!(i.interpreter().is_completed());
    /// ```
    pub fn start(&mut self) {
        self.interpreter.init();
    }

    /// What the island did so far.
    ///
    /// # Examples
    ///
    /// ```
    /// let i = rs_impl::island::Island::new(rs_impl::island::GraphBuilder::new().build().unwrap());
    /// assert_eq!(i.stats().polls, 0);
    /// ```
    pub fn stats(&self) -> IslandStats {
        self.stats
    }

    /// The interpreter inside (for its counters).
    ///
    /// # Examples
    ///
    /// ```
    /// let i = rs_impl::island::Island::new(rs_impl::island::GraphBuilder::new().build().unwrap());
    /// assert!(i.interpreter().is_completed());
    /// ```
    pub fn interpreter(&self) -> &Interpreter {
        &self.interpreter
    }

    /// The interpreter inside, for tests (fuzzing, the finalisation gate).
    #[doc(hidden)]
    pub fn interpreter_mut(&mut self) -> &mut Interpreter {
        &mut self.interpreter
    }

    /// Runs the island until it parks, yields or completes, with `waker` registered on a
    /// park. `Poll::Ready(())` when it completed.
    fn run(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        self.stats.polls += 1;
        let mut budget = self.budget;
        loop {
            self.mailbox.begin_run();
            self.interpreter.init();
            self.mailbox.take_queued(&mut self.scratch);
            for i in 0..self.scratch.len() {
                let stage = self.scratch[i];
                self.interpreter.run_async_input(stage);
                budget = budget.saturating_sub(1);
            }
            self.scratch.clear();
            budget = self.interpreter.execute(budget);
            if self.interpreter.is_completed() {
                self.done = true;
                return Poll::Ready(());
            }
            if budget == 0 {
                // Spent: let the executor run others, and come back (RUNNING stays set, so
                // posters meanwhile need not wake us: we are already scheduled). Batching
                // output sides flush first: what this run produced leaves now.
                self.interpreter.run_park_hooks(RunEnd::Yield);
                if self.interpreter.is_completed() {
                    self.done = true;
                    return Poll::Ready(());
                }
                self.stats.yields += 1;
                match &self.yielder {
                    Some(y) => y(cx.waker().clone()),
                    None => cx.waker().wake_by_ref(),
                }
                return Poll::Pending;
            }
            // The run ends: stages that asked (the batching boundary's output sides) flush
            // here, and an input side acts on an upstream error it held back while elements
            // were still deliverable. What they cause runs before the island parks.
            self.interpreter.run_park_hooks(RunEnd::Park);
            if self.interpreter.is_completed() {
                self.done = true;
                return Poll::Ready(());
            }
            if self.interpreter.is_suspended() {
                continue;
            }
            if self.mailbox.park(cx.waker()) {
                self.stats.parks += 1;
                return Poll::Pending;
            }
        }
    }
}

impl Future for Island {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().run(cx)
    }
}

#[cfg(all(test, not(rs_loom)))]
mod tests {
    use super::*;

    #[test]
    fn island_is_send_and_unpin() {
        fn assert_send<T: Send + Unpin + 'static>() {}
        assert_send::<Island>();
    }
}
