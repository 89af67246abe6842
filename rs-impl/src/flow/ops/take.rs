//! [`Take`]: the first `n` elements, then the end.

use std::fmt;
use std::marker::PhantomData;

use crate::flow::{Emit, Operator, Signal};

/// Passes the first `n` elements, then completes downstream and cancels upstream (with the
/// `n`-th element, not on the next pull). `n == 0` completes at start, before any element is
/// asked for.
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Take, Flow};
/// let f = Flow::from_iter(0..u64::MAX).apply(Take::new(3));
/// # drop(f);
/// ```
pub struct Take<T> {
    left: u64,
    _t: PhantomData<fn(T) -> T>,
}

impl<T> Take<T> {
    /// The operator passing `n` elements.
    ///
    /// # Examples
    ///
    /// See [`Take`].
    pub fn new(n: u64) -> Self {
        Take {
            left: n,
            _t: PhantomData,
        }
    }
}

impl<T> Clone for Take<T> {
    fn clone(&self) -> Self {
        Take::new(self.left)
    }
}

impl<T> fmt::Debug for Take<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Take").field("left", &self.left).finish()
    }
}

impl<T: Send + 'static> Operator<T> for Take<T> {
    type Out = T;

    fn on_start<E: Emit<T> + ?Sized>(&mut self, _: &mut E) -> Signal {
        if self.left == 0 {
            Signal::Done
        } else {
            Signal::Continue
        }
    }

    #[inline(always)]
    fn on_next<E: Emit<T> + ?Sized>(&mut self, item: T, out: &mut E) -> Signal {
        self.left -= 1;
        let s = out.emit(item);
        if self.left == 0 {
            return match s {
                Signal::Fail(e) => Signal::Fail(e),
                _ => Signal::Done,
            };
        }
        s
    }

    fn name(&self) -> &'static str {
        "take"
    }
}
