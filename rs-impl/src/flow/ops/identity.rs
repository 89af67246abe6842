//! [`Identity`]: every element through, unchanged.

use std::fmt;
use std::marker::PhantomData;

use crate::flow::{Emit, Operator, Signal};

/// Passes every element through unchanged (a hop that does nothing: for benchmarks, tests,
/// and as a placeholder in generic code).
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Identity, Flow};
/// let f = Flow::from_iter(0..3u8).apply(Identity::new());
/// # drop(f);
/// ```
pub struct Identity<T>(PhantomData<fn(T) -> T>);

impl<T> Identity<T> {
    /// The identity operator.
    ///
    /// # Examples
    ///
    /// See [`Identity`].
    pub fn new() -> Self {
        Identity(PhantomData)
    }
}

impl<T> Default for Identity<T> {
    fn default() -> Self {
        Identity::new()
    }
}

impl<T> Clone for Identity<T> {
    fn clone(&self) -> Self {
        Identity::new()
    }
}

impl<T> fmt::Debug for Identity<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Identity")
    }
}

impl<T: Send + 'static> Operator<T> for Identity<T> {
    type Out = T;

    #[inline(always)]
    fn on_next<E: Emit<T> + ?Sized>(&mut self, item: T, out: &mut E) -> Signal {
        out.emit(item)
    }

    fn name(&self) -> &'static str {
        "identity"
    }
}
