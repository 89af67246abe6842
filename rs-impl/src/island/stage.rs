//! The stage trait (its contract, lifecycle and an example are in the docs of [`Stage`]).

use rs_api::Error;

use super::interpreter::Ctx;
use super::port::{PortId, Ports, RunEnd};

/// A stage of an island: logic with in-ports and out-ports, driven by the interpreter.
///
/// A stage is a piece of logic with in-ports ([`Inlet`](crate::island::Inlet)) and out-ports ([`Outlet`](crate::island::Outlet)), run by
/// the [interpreter](crate::island::Interpreter) one handler at a time. Handlers never block and never
/// synchronise: every signal is a direct call on the island's thread. Inside a handler the
/// stage talks to its ports through [`Ctx`]: [`Ctx::pull`] asks upstream for one element,
/// [`Ctx::push`] hands one element downstream (only after downstream pulled), [`Ctx::grab`]
/// takes the element that arrived, [`Ctx::complete`], [`Ctx::fail`] and [`Ctx::cancel`] close
/// ports, [`Ctx::complete_stage`] and [`Ctx::fail_stage`] close them all, and
/// [`Ctx::set_keep_going`] keeps a stage alive after its last port closed.
///
/// # Lifecycle
///
/// 1. [`Stage::pre_start`], once, before any other handler (in stage order).
/// 2. Handlers, for the events of its ports: [`Stage::on_push`], [`Stage::on_pull`],
///    [`Stage::on_upstream_finish`], [`Stage::on_upstream_failure`],
///    [`Stage::on_downstream_finish`]; [`Stage::on_async_input`] when something outside the
///    island posted to the stage's [`Notifier`](crate::island::Notifier); and [`Stage::on_park`] at the
///    end of each run of the island, for a stage that asked with [`Ctx::call_on_park`].
/// 3. When the stage's last port has closed (and keep-going is off), [`Stage::post_stop`],
///    exactly once; then the interpreter drops the stage (its state is released).
///
/// A handler that panics fails its stage: every out-port fails with
/// [`IslandError::StagePanicked`](crate::island::IslandError::StagePanicked), every in-port is
/// cancelled, and the other stages go on with that signal. A panic in `post_stop` is reported
/// and ignored.
///
/// # Example: a stage that emits every element twice
///
/// ```
/// use rs_impl::island::{Ctx, Inlet, Outlet, PortId, Ports, Stage};
///
/// struct Twice<T> { inlet: Inlet<T>, outlet: Outlet<T>, pending: Option<T> }
///
/// impl<T: Clone + Send + 'static> Stage for Twice<T> {
///     fn ports(&self, ports: &mut Ports) {
///         ports.inlet(self.inlet);
///         ports.outlet(self.outlet);
///     }
///     fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
///         let x = ctx.grab(self.inlet);
///         self.pending = Some(x.clone());
///         ctx.push(self.outlet, x);
///     }
///     fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
///         match self.pending.take() {
///             Some(x) => {
///                 ctx.push(self.outlet, x);
///                 if ctx.is_inlet_closed(self.inlet) { ctx.complete_stage() }
///             }
///             None => ctx.pull(self.inlet),
///         }
///     }
///     fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
///         // With a second copy still to push, the out-port stays open and so does the
///         // stage; `on_pull` pushes it, and completes when the in-port is closed.
///         if self.pending.is_none() { ctx.complete_stage() }
///     }
/// }
/// # let _ = std::marker::PhantomData::<Twice<u8>>;
/// ```
///
/// See [`Flow::via`](crate::flow::Flow::via) for putting such a stage into a flow.
///
/// Only [`ports`](Stage::ports) is required; every handler has a default that fits a stage
/// without that kind of port (a push to a stage with no `on_push` is a programming error and
/// fails the stage).
pub trait Stage: Send {
    /// Declares the stage's ports, once, when the stage is added to a graph.
    fn ports(&self, ports: &mut Ports);

    /// A name for errors and diagnostics; the type's name by default.
    fn name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }

    /// Runs once, before any other handler of any stage runs an event.
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        let _ = ctx;
    }

    /// An element arrived on `inlet` (take it with [`Ctx::grab`]).
    fn on_push(&mut self, inlet: PortId, ctx: &mut Ctx<'_>) {
        let _ = inlet;
        ctx.fail_stage(Error::msg(format!(
            "stage {} got a push but has no on_push handler",
            self.name()
        )));
    }

    /// Downstream of `outlet` asked for one element: [`Ctx::push`] may now be called once.
    fn on_pull(&mut self, outlet: PortId, ctx: &mut Ctx<'_>) {
        let _ = outlet;
        ctx.fail_stage(Error::msg(format!(
            "stage {} got a pull but has no on_pull handler",
            self.name()
        )));
    }

    /// Upstream of `inlet` completed. By default the stage completes.
    fn on_upstream_finish(&mut self, inlet: PortId, ctx: &mut Ctx<'_>) {
        let _ = inlet;
        ctx.complete_stage();
    }

    /// Upstream of `inlet` failed. By default the stage fails with the same error.
    fn on_upstream_failure(&mut self, inlet: PortId, error: Error, ctx: &mut Ctx<'_>) {
        let _ = inlet;
        ctx.fail_stage(error);
    }

    /// Downstream of `outlet` cancelled. By default the stage completes (cancelling upstream).
    fn on_downstream_finish(&mut self, outlet: PortId, ctx: &mut Ctx<'_>) {
        let _ = outlet;
        ctx.complete_stage();
    }

    /// Something outside the island posted to this stage's
    /// [`Notifier`](super::Notifier) (a request from a subscriber, an element from a
    /// foreign publisher). Runs on the island, serially with every other handler.
    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        let _ = ctx;
    }

    /// The island's run is ending: it is about to park (nothing left to do until something
    /// posts to it) or to yield to its executor (its budget is spent). Runs only for a stage
    /// that asked with [`Ctx::call_on_park`], after every event of the run. A stage that
    /// batches what it sends out of the island flushes here (the batching boundary's output
    /// side does). Events it causes run before the island parks.
    fn on_park(&mut self, end: RunEnd, ctx: &mut Ctx<'_>) {
        let _ = (end, ctx);
    }

    /// Runs exactly once, after the stage's last port closed; the stage is dropped right
    /// after. A panic here is reported and ignored.
    fn post_stop(&mut self) {}
}
