//! [`Fold`]: the accumulation of every element, once, on completion.

use std::fmt;
use std::sync::Arc;

use crate::flow::{Emit, Operator, Signal};

/// Folds every element into an accumulator with `f`, starting from a seed, and emits it once
/// when upstream completes (when downstream asks for it, if it has not yet). An upstream error
/// fails the stream without emitting.
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Fold, Flow};
/// let f = Flow::from_iter(1..4u32).apply(Fold::new(0u32, |a: u32, x: u32| a + x));
/// # drop(f);
/// ```
pub struct Fold<S, F> {
    acc: Option<S>,
    /// The upstream completed and the result waits for room.
    done: bool,
    f: Arc<F>,
}

impl<S, F> Fold<S, F> {
    /// The operator folding with `f` from `seed`.
    ///
    /// # Examples
    ///
    /// See [`Fold`].
    pub fn new(seed: S, f: F) -> Self {
        Fold {
            acc: Some(seed),
            done: false,
            f: Arc::new(f),
        }
    }
}

impl<S: Clone, F> Clone for Fold<S, F> {
    fn clone(&self) -> Self {
        Fold {
            acc: self.acc.clone(),
            done: self.done,
            f: self.f.clone(),
        }
    }
}

impl<S, F> fmt::Debug for Fold<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fold")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<A, S, F> Operator<A> for Fold<S, F>
where
    S: Clone + Send + 'static,
    F: Fn(S, A) -> S + Send + Sync + 'static,
{
    type Out = S;

    #[inline(always)]
    fn on_next<E: Emit<S> + ?Sized>(&mut self, item: A, _: &mut E) -> Signal {
        if let Some(acc) = self.acc.take() {
            self.acc = Some((self.f)(acc, item));
        }
        Signal::Continue
    }

    fn on_complete<E: Emit<S> + ?Sized>(&mut self, out: &mut E) -> Signal {
        self.done = true;
        self.on_room(out)
    }

    fn has_pending(&self) -> bool {
        self.done && self.acc.is_some()
    }

    fn on_room<E: Emit<S> + ?Sized>(&mut self, out: &mut E) -> Signal {
        if !self.done {
            return Signal::Continue;
        }
        if out.has_room() {
            if let Some(acc) = self.acc.take() {
                return match out.emit(acc) {
                    Signal::Fail(e) => Signal::Fail(e),
                    _ => Signal::Done,
                };
            }
        }
        Signal::Done
    }

    fn name(&self) -> &'static str {
        "fold"
    }
}
