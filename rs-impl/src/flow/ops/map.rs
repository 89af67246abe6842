//! [`Map`]: a function applied to every element.

use std::fmt;
use std::sync::Arc;

use crate::flow::{Emit, Operator, Signal};

/// Applies a function to every element. The function is shared (behind an `Arc`) by every
/// materialisation of the flow.
///
/// # Examples
///
/// ```
/// use rs_impl::flow::{ops::Map, Flow};
/// let f = Flow::from_iter(0..3u8).apply(Map::new(|x: u8| u32::from(x) * 2));
/// # drop(f);
/// ```
pub struct Map<F> {
    f: Arc<F>,
}

impl<F> Map<F> {
    /// The operator applying `f`.
    ///
    /// # Examples
    ///
    /// See [`Map`].
    pub fn new(f: F) -> Self {
        Map { f: Arc::new(f) }
    }
}

impl<F> Clone for Map<F> {
    fn clone(&self) -> Self {
        Map { f: self.f.clone() }
    }
}

impl<F> fmt::Debug for Map<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Map")
    }
}

impl<A, B, F> Operator<A> for Map<F>
where
    B: Send + 'static,
    F: Fn(A) -> B + Send + Sync + 'static,
{
    type Out = B;

    #[inline(always)]
    fn on_next<E: Emit<B> + ?Sized>(&mut self, item: A, out: &mut E) -> Signal {
        out.emit((self.f)(item))
    }

    fn name(&self) -> &'static str {
        "map"
    }
}
