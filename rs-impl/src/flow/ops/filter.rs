//! [`Filter`]: the elements a predicate holds for.

use std::fmt;
use std::sync::Arc;

use crate::flow::{Emit, Operator, Signal};

/// Keeps the elements for which a predicate holds; the others are dropped (and the driver
/// takes the next element from upstream).
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Filter, Flow};
/// let f = Flow::from_iter(0..10u8).apply(Filter::new(|x: &u8| x % 2 == 0));
/// # drop(f);
/// ```
pub struct Filter<F> {
    p: Arc<F>,
}

impl<F> Filter<F> {
    /// The operator keeping what `p` holds for.
    ///
    /// # Examples
    ///
    /// See [`Filter`].
    pub fn new(p: F) -> Self {
        Filter { p: Arc::new(p) }
    }
}

impl<F> Clone for Filter<F> {
    fn clone(&self) -> Self {
        Filter { p: self.p.clone() }
    }
}

impl<F> fmt::Debug for Filter<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Filter")
    }
}

impl<T, F> Operator<T> for Filter<F>
where
    T: Send + 'static,
    F: Fn(&T) -> bool + Send + Sync + 'static,
{
    type Out = T;

    #[inline(always)]
    fn on_next<E: Emit<T> + ?Sized>(&mut self, item: T, out: &mut E) -> Signal {
        if (self.p)(&item) {
            out.emit(item)
        } else {
            Signal::Continue
        }
    }

    fn name(&self) -> &'static str {
        "filter"
    }
}
