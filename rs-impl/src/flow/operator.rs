//! The linear operator trait (its contract is in the docs of [`Operator`]).

use rs_api::Error;

/// What an operator (or downstream, through [`Emit::emit`]) says after handling a signal.
#[must_use = "a Done or Fail must reach the driver: return it"]
#[derive(Debug, Clone)]
pub enum Signal {
    /// More input is welcome.
    Continue,
    /// Finished: no more input is wanted (upstream is cancelled), and downstream completes
    /// once the pending output was delivered.
    Done,
    /// The stream fails with this error (upstream is cancelled, pending output dropped).
    Fail(Error),
}

impl Signal {
    /// Whether this is [`Signal::Continue`].
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::flow::Signal::Continue.is_continue());
    /// assert!(!rs_impl::flow::Signal::Done.is_continue());
    /// ```
    #[inline]
    pub fn is_continue(&self) -> bool {
        matches!(self, Signal::Continue)
    }
}

/// Where an operator's output goes: the rest of the fused chain, up to the island's edge.
pub trait Emit<T> {
    /// Hands one element downstream; returns downstream's [`Signal`] (pass it on). Call it only
    /// while [`has_room`](Emit::has_room) is `true` (it is, once, when
    /// [`Operator::on_next`] is called).
    fn emit(&mut self, item: T) -> Signal;

    /// Whether downstream takes another element now.
    fn has_room(&mut self) -> bool;
}

/// A linear operator: one element in, zero or more out, with completion, errors and the
/// operator's say over upstream demand.
///
/// Every linear operator of a [`Flow`](crate::flow::Flow) — the built-in [`map`](crate::flow::Flow::map),
/// [`filter`](crate::flow::Flow::filter), [`take`](crate::flow::Flow::take), … and yours, added with
/// [`apply`](crate::flow::Flow::apply) — is an [`Operator`]. It is written once, against this trait,
/// and runs two ways from that one definition:
///
/// * **fused:** a run of operators between two island edges is composed by the compiler into
///   one loop (each operator's [`Emit`] is the next operator, statically typed), so a hop costs
///   what its own code costs;
/// * **as an interpreter stage** of its own, with an in-port and an out-port
///   ([`OperatorStage`](crate::flow::OperatorStage)), for graphs wired by hand with a
///   [`GraphBuilder`](crate::island::GraphBuilder).
///
/// Only [`on_next`](Operator::on_next) is required. The defaults fit an operator that emits
/// at most one element per element and keeps no output back: start without output, complete
/// when upstream completes, fail with upstream's error.
///
/// # The contract between an operator and its driver
///
/// * [`on_next`](Operator::on_next) is called only when downstream can take at least one
///   element ([`Emit::has_room`] is `true`) and the operator holds no pending output
///   ([`has_pending`](Operator::has_pending) is `false`). An operator that emits at most one
///   element per element needs to check nothing.
/// * An operator that emits **more than one** element for one input checks
///   [`Emit::has_room`] before each further emission, keeps what does not fit, reports it
///   with [`has_pending`](Operator::has_pending), and emits it from
///   [`on_room`](Operator::on_room), which the driver calls when downstream has room again.
///   Emitting while `has_room` is `false` is a bug of the operator: the stream fails with
///   [`IslandError::PortMisuse`](crate::island::IslandError::PortMisuse).
/// * Every method returns a [`Signal`]: [`Signal::Continue`] (more input is welcome),
///   [`Signal::Done`] (this operator has finished: the driver cancels upstream and completes
///   downstream once the pending output was delivered) or [`Signal::Fail`] (the stream fails
///   with that error: upstream is cancelled, pending output is dropped). What
///   [`Emit::emit`] returns is downstream's signal: pass it on (an operator that ignores a
///   `Done` from downstream only wastes work; its output is no longer delivered).
/// * [`on_complete`](Operator::on_complete) and [`on_error`](Operator::on_error) run at most
///   once, and never after the operator returned `Done` or `Fail`. Both may emit (a fold emits
///   its result on completion; an operator may recover from an error with elements of its own
///   and complete).
/// * A panic in any method fails the stream with
///   [`IslandError::StagePanicked`](crate::island::IslandError::StagePanicked).
/// * Each materialisation of a flow (each subscription of its publisher) runs a fresh
///   [`Clone`] of the operator, so its state is per subscription.
///
/// # Example: an operator that emits every element twice
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::flow::{Emit, Flow, Operator, Signal};
/// use rs_impl::island::Runtime;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// #[derive(Clone, Default)]
/// struct Twice<T> { pending: Option<T> }
///
/// impl<T: Clone + Send + 'static> Operator<T> for Twice<T> {
///     type Out = T;
///     fn on_next<E: Emit<T> + ?Sized>(&mut self, x: T, out: &mut E) -> Signal {
///         if let Signal::Done = out.emit(x.clone()) {
///             return Signal::Done;
///         }
///         if out.has_room() { out.emit(x) } else { self.pending = Some(x); Signal::Continue }
///     }
///     fn has_pending(&self) -> bool { self.pending.is_some() }
///     fn on_room<E: Emit<T> + ?Sized>(&mut self, out: &mut E) -> Signal {
///         match self.pending.take() { Some(x) => out.emit(x), None => Signal::Continue }
///     }
/// }
///
/// let runtime = Runtime::with_threads(1).unwrap();
/// let p = Flow::from_iter(1..=3u32).apply(Twice::default()).into_publisher(&runtime);
/// let (s, h) = collect(RequestStrategy::OneByOne);
/// p.subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), vec![1, 1, 2, 2, 3, 3]);
/// ```
pub trait Operator<In>: Clone + Send + 'static {
    /// The elements it emits.
    type Out: Send + 'static;

    /// Handles one element from upstream; emits zero or more elements into `out`.
    fn on_next<E: Emit<Self::Out> + ?Sized>(&mut self, item: In, out: &mut E) -> Signal;

    /// Runs once, before the first element (on the island, when it starts). May emit while
    /// `out` has room, or finish at once (`take(0)` returns [`Signal::Done`]).
    fn on_start<E: Emit<Self::Out> + ?Sized>(&mut self, out: &mut E) -> Signal {
        let _ = out;
        Signal::Continue
    }

    /// Upstream completed. May emit while `out` has room and keep the rest pending;
    /// downstream completes once nothing is pending. [`Signal::Fail`] fails it instead.
    fn on_complete<E: Emit<Self::Out> + ?Sized>(&mut self, out: &mut E) -> Signal {
        let _ = out;
        Signal::Done
    }

    /// Upstream failed with `error`. By default the stream fails with it
    /// ([`Signal::Fail`]); an operator may map it, or recover: emit elements of its own and
    /// return [`Signal::Done`] (downstream then completes after them).
    fn on_error<E: Emit<Self::Out> + ?Sized>(&mut self, error: Error, out: &mut E) -> Signal {
        let _ = out;
        Signal::Fail(error)
    }

    /// Whether it holds output that did not fit downstream's room.
    #[inline]
    fn has_pending(&self) -> bool {
        false
    }

    /// Downstream has room again: emit what is pending (while `out` has room).
    fn on_room<E: Emit<Self::Out> + ?Sized>(&mut self, out: &mut E) -> Signal {
        let _ = out;
        Signal::Continue
    }

    /// A name for errors and diagnostics; the type's name by default.
    fn name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}
