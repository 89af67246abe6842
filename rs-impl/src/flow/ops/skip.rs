//! [`Skip`]: all but the first `n` elements.

use std::fmt;
use std::marker::PhantomData;

use crate::flow::{Emit, Operator, Signal};

/// Drops the first `n` elements, then passes the rest (Pekko's `drop`).
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Skip, Flow};
/// let f = Flow::from_iter(0..10u8).apply(Skip::new(2));
/// # drop(f);
/// ```
pub struct Skip<T> {
    left: u64,
    _t: PhantomData<fn(T) -> T>,
}

impl<T> Skip<T> {
    /// The operator dropping `n` elements.
    ///
    /// # Examples
    ///
    /// See [`Skip`].
    pub fn new(n: u64) -> Self {
        Skip {
            left: n,
            _t: PhantomData,
        }
    }
}

impl<T> Clone for Skip<T> {
    fn clone(&self) -> Self {
        Skip::new(self.left)
    }
}

impl<T> fmt::Debug for Skip<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Skip").field("left", &self.left).finish()
    }
}

impl<T: Send + 'static> Operator<T> for Skip<T> {
    type Out = T;

    #[inline(always)]
    fn on_next<E: Emit<T> + ?Sized>(&mut self, item: T, out: &mut E) -> Signal {
        if self.left > 0 {
            self.left -= 1;
            Signal::Continue
        } else {
            out.emit(item)
        }
    }

    fn name(&self) -> &'static str {
        "skip"
    }
}
