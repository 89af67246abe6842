//! [`Scan`]: the running accumulation after each element.

use std::fmt;
use std::sync::Arc;

use crate::flow::{Emit, Operator, Signal};

/// Emits `acc = f(&acc, x)` after each element, starting from a seed (the seed itself is not
/// emitted).
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Scan, Flow};
/// let f = Flow::from_iter(1..4u32).apply(Scan::new(0u32, |a: &u32, x: u32| a + x));
/// # drop(f);
/// ```
pub struct Scan<S, F> {
    acc: S,
    f: Arc<F>,
}

impl<S, F> Scan<S, F> {
    /// The operator accumulating with `f` from `seed`.
    ///
    /// # Examples
    ///
    /// See [`Scan`].
    pub fn new(seed: S, f: F) -> Self {
        Scan {
            acc: seed,
            f: Arc::new(f),
        }
    }
}

impl<S: Clone, F> Clone for Scan<S, F> {
    fn clone(&self) -> Self {
        Scan {
            acc: self.acc.clone(),
            f: self.f.clone(),
        }
    }
}

impl<S, F> fmt::Debug for Scan<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scan")
    }
}

impl<A, S, F> Operator<A> for Scan<S, F>
where
    S: Clone + Send + 'static,
    F: Fn(&S, A) -> S + Send + Sync + 'static,
{
    type Out = S;

    #[inline(always)]
    fn on_next<E: Emit<S> + ?Sized>(&mut self, item: A, out: &mut E) -> Signal {
        self.acc = (self.f)(&self.acc, item);
        out.emit(self.acc.clone())
    }

    fn name(&self) -> &'static str {
        "scan"
    }
}
