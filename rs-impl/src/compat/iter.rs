//! A publisher read as a blocking `Iterator`.

use std::fmt;

use futures::executor::{block_on_stream, BlockingStream};
use rs_api::{Error, Publisher};

use super::stream::{to_stream, PublisherStream};

/// A publisher read as a blocking `Iterator` of `Result<T, Error>` (see [`blocking_iter`]).
pub struct BlockingIter<T> {
    inner: BlockingStream<PublisherStream<T>>,
}

impl<T> fmt::Debug for BlockingIter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingIter").finish_non_exhaustive()
    }
}

/// Subscribes to `publisher` and reads it as a blocking iterator: `next` blocks the calling
/// thread until the next element or signal.
///
/// It is a [`PublisherStream`] read with `futures::executor::block_on_stream`, so it has the
/// same contract: `prefetch` elements requested at first and replenished in halves when the
/// next one is wanted (at most `prefetch` buffered: what bounds memory), `on_error` as one
/// `Err` and then the end, and **cancel on drop** (dropping the iterator before the end
/// cancels the subscription). Waiting parks the thread and the publisher's signal unparks it;
/// nothing spins.
///
/// Do not call it from inside an async task: it blocks the thread.
///
/// # Examples
///
/// ```
/// use rs_impl::compat::blocking_iter;
///
/// let numbers = rs_impl::source::range(0u64..);
/// // Take five of an endless publisher; dropping the iterator cancels it.
/// let first: Vec<u64> = blocking_iter(&numbers, 8).take(5).map(Result::unwrap).collect();
/// assert_eq!(first, vec![0, 1, 2, 3, 4]);
/// ```
///
/// # Panics
///
/// If `prefetch` is 0 (the crate's size rule).
#[track_caller]
pub fn blocking_iter<T, P>(publisher: &P, prefetch: usize) -> BlockingIter<T>
where
    T: Send + 'static,
    P: Publisher<T> + ?Sized,
{
    BlockingIter {
        inner: block_on_stream(to_stream(publisher, prefetch)),
    }
}

impl<T> Iterator for BlockingIter<T> {
    type Item = Result<T, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next()
    }
}
