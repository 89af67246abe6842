//! [`from_iter`] and [`range`]: the elements of a cloneable `IntoIterator` ([`IterPublisher`]).

use rs_api::{BoxSubscriber, Publisher};

use super::made::subscribe_made;
use super::pull::{Pull, Pulled};
use super::range::IntegerRange;

/// Adapts an iterator to [`Pull`].
#[derive(Debug)]
pub(super) struct IterPull<I>(pub(super) I);

impl<I> Pull<I::Item> for IterPull<I>
where
    I: Iterator + Send,
{
    fn pull(&mut self) -> Pulled<I::Item> {
        match self.0.next() {
            Some(item) => Pulled::Next(item),
            None => Pulled::Complete,
        }
    }
}

/// Publishes the elements of a cloneable `IntoIterator` (see [`from_iter`]).
#[derive(Debug, Clone)]
#[must_use = "a publisher does nothing until subscribed to"]
pub struct IterPublisher<I> {
    iterable: I,
}

/// A publisher of the elements of `iterable`; each subscription iterates a fresh clone.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let p = rs_impl::source::from_iter(vec!["a", "b"]);
/// for _ in 0..2 {
///     let (s, r) = collect(RequestStrategy::OneByOne);
///     p.subscribe(Box::new(s));
///     assert_eq!(r.wait().unwrap(), vec!["a", "b"]);
/// }
/// ```
pub fn from_iter<I>(iterable: I) -> IterPublisher<I>
where
    I: IntoIterator + Clone,
{
    IterPublisher { iterable }
}

/// A publisher of the integers in `range`: `a..b`, `a..=b`, or the open `a..`, which runs to
/// the type's maximum (included) and then completes, instead of overflowing.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, r) = collect(RequestStrategy::Unbounded);
/// rs_impl::source::range(3i32..6).subscribe(Box::new(s));
/// assert_eq!(r.wait().unwrap(), vec![3, 4, 5]);
///
/// let (s, r) = collect(RequestStrategy::Unbounded);
/// rs_impl::source::range(250u8..).subscribe(Box::new(s)); // open: up to u8::MAX
/// assert_eq!(r.wait().unwrap(), vec![250, 251, 252, 253, 254, 255]);
/// ```
pub fn range<R: IntegerRange>(range: R) -> IterPublisher<R::Iter> {
    IterPublisher {
        iterable: range.into_bounded(),
    }
}

impl<I> IterPublisher<I> {
    /// The iterable (merge takes it as a known iterator: no subscription).
    pub(crate) fn into_iterable(self) -> I {
        self.iterable
    }
}

impl<I> Publisher<I::Item> for IterPublisher<I>
where
    I: IntoIterator + Clone,
    I::IntoIter: Send + 'static,
    I::Item: Send + 'static,
{
    fn subscribe(&self, subscriber: BoxSubscriber<I::Item>) {
        subscribe_made(|| IterPull(self.iterable.clone().into_iter()), subscriber);
    }
}
