//! What merge takes as an inner stream: [`Inner`], and what it makes of one: [`InnerSource`].

use std::fmt;
use std::sync::Arc as StdArc;

use rs_api::{BoxPublisher, Publisher};

use crate::flow::FlowPublisher;
use crate::source::{Empty, Failed, FnPublisher, IterPublisher, Just, Never, PullPublisher};

/// An inner stream as merge runs it: a value or an iterator known up front (merged without a
/// subscription: no demand protocol, no queue), or a publisher (subscribed to).
pub enum InnerSource<U> {
    /// One value.
    Just(U),
    /// The elements of an iterator, pulled by the drain as downstream demand allows.
    Iter(Box<dyn Iterator<Item = U> + Send>),
    /// A publisher: subscribed to, with the inner's prefetch.
    Publisher(BoxPublisher<U>),
    /// Nothing.
    Empty,
}

impl<U> fmt::Debug for InnerSource<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InnerSource::Just(_) => "Just",
            InnerSource::Iter(_) => "Iter",
            InnerSource::Publisher(_) => "Publisher",
            InnerSource::Empty => "Empty",
        })
    }
}

/// What [`merge`](super::merge) takes and a [`flat_map`](super::MergeExt::flat_map) function
/// returns: an inner stream of `U`.
///
/// The sources whose elements are known without running a protocol say so, and merge skips
/// their subscription (RxJava's scalar and fused inners): [`source::just`](crate::source::just)
/// and `Option<U>` are one value, [`source::from_iter`](crate::source::from_iter),
/// [`source::range`](crate::source::range) and `Vec<U>` an iterator, [`source::empty`](crate::source::empty)
/// nothing. Every other publisher of this crate, a [`BoxPublisher`], an `Arc` of a
/// publisher, and [`Subscribed`] (any publisher of yours) are subscribed to.
///
/// # Examples
///
/// ```
/// use rs_api::{BoxPublisher, Publisher};
/// use rs_impl::merge::{Inner, InnerSource, Subscribed};
/// use rs_impl::source;
///
/// assert!(matches!(source::just(1u8).into_source(), InnerSource::Just(1)));
/// assert!(matches!(source::range(0u8..3).into_source(), InnerSource::Iter(_)));
/// let boxed: BoxPublisher<u8> = Box::new(source::range(0u8..3));
/// assert!(matches!(boxed.into_source(), InnerSource::Publisher(_)));
/// assert!(matches!(Subscribed(source::range(0u8..3)).into_source(), InnerSource::Publisher(_)));
/// ```
pub trait Inner<U>: Send + 'static {
    /// How merge runs it.
    fn into_source(self) -> InnerSource<U>;

    /// Hands this inner to `visitor` with its static type where it has one: an inner whose
    /// elements are an iterator calls [`InnerVisitor::iter`] with that iterable unboxed (merge
    /// then drains it in a loop compiled for its type, and boxes it only when downstream
    /// demand runs out first); every other inner calls [`InnerVisitor::source`] with
    /// [`into_source`](Inner::into_source), which is the default.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::merge::{Inner, InnerSource, InnerVisitor};
    /// struct Kind;
    /// impl InnerVisitor<u8> for Kind {
    ///     type Out = &'static str;
    ///     fn iter<J>(self, _: J) -> &'static str
    ///     where
    ///         J: IntoIterator<Item = u8>,
    ///         J::IntoIter: Send + 'static,
    ///     {
    ///         "typed iterator"
    ///     }
    ///     fn source(self, _: InnerSource<u8>) -> &'static str {
    ///         "other"
    ///     }
    /// }
    /// assert_eq!(rs_impl::source::range(0u8..3).visit(Kind), "typed iterator");
    /// assert_eq!(vec![1u8].visit(Kind), "typed iterator");
    /// assert_eq!(rs_impl::source::just(1u8).visit(Kind), "other");
    /// ```
    // Always inlined: in a merge's pull loop the inner's kind then folds away (a value is
    // taken without its `InnerSource` being built), ten instructions of eighty per value.
    #[inline(always)]
    fn visit<V: InnerVisitor<U>>(self, visitor: V) -> V::Out
    where
        Self: Sized,
    {
        visitor.source(self.into_source())
    }
}

/// What [`Inner::visit`] hands an inner to: with its iterator's static type, or as an
/// [`InnerSource`].
///
/// # Examples
///
/// See [`Inner::visit`].
pub trait InnerVisitor<U> {
    /// What the visit returns.
    type Out;

    /// An inner whose elements are those of `iterable`, with its static type (not yet turned
    /// into an iterator: a panic there is the visitor's to catch).
    fn iter<J>(self, iterable: J) -> Self::Out
    where
        J: IntoIterator<Item = U>,
        J::IntoIter: Send + 'static;

    /// Any other inner.
    fn source(self, source: InnerSource<U>) -> Self::Out;
}

/// Any publisher as an inner stream that is subscribed to (for a publisher type of your own;
/// a [`BoxPublisher`] or an `Arc` of a publisher is one already).
///
/// # Examples
///
/// See [`Inner`].
#[derive(Debug, Clone)]
pub struct Subscribed<P>(pub P);

impl<U, P> Inner<U> for Subscribed<P>
where
    P: Publisher<U> + Send + 'static,
{
    fn into_source(self) -> InnerSource<U> {
        InnerSource::Publisher(Box::new(self.0))
    }
}

impl<U: Send + 'static> Inner<U> for InnerSource<U> {
    fn into_source(self) -> InnerSource<U> {
        self
    }
}

impl<U: Send + 'static> Inner<U> for BoxPublisher<U> {
    fn into_source(self) -> InnerSource<U> {
        InnerSource::Publisher(self)
    }
}

impl<U, P> Inner<U> for StdArc<P>
where
    P: Publisher<U> + Send + Sync + ?Sized + 'static,
{
    fn into_source(self) -> InnerSource<U> {
        InnerSource::Publisher(Box::new(self))
    }
}

impl<U: Clone + Send + 'static> Inner<U> for Just<U> {
    #[inline]
    fn into_source(self) -> InnerSource<U> {
        InnerSource::Just(self.into_value())
    }
}

impl<U: Send + 'static> Inner<U> for Option<U> {
    #[inline]
    fn into_source(self) -> InnerSource<U> {
        match self {
            Some(u) => InnerSource::Just(u),
            None => InnerSource::Empty,
        }
    }
}

impl<U: Send + 'static> Inner<U> for Vec<U> {
    fn into_source(self) -> InnerSource<U> {
        InnerSource::Iter(Box::new(self.into_iter()))
    }

    fn visit<V: InnerVisitor<U>>(self, visitor: V) -> V::Out {
        visitor.iter(self)
    }
}

impl<U: Send + 'static> Inner<U> for Empty<U> {
    fn into_source(self) -> InnerSource<U> {
        InnerSource::Empty
    }
}

impl<I> Inner<I::Item> for IterPublisher<I>
where
    I: IntoIterator + Clone + Send + 'static,
    I::IntoIter: Send + 'static,
    I::Item: Send + 'static,
{
    fn into_source(self) -> InnerSource<I::Item> {
        InnerSource::Iter(Box::new(self.into_iterable().into_iter()))
    }

    fn visit<V: InnerVisitor<I::Item>>(self, visitor: V) -> V::Out {
        visitor.iter(self.into_iterable())
    }
}

/// Publishers of this crate that are subscribed to.
macro_rules! subscribed {
    ($( [$($g:tt)*] $t:ty => $u:ty where [$($w:tt)*] ;)*) => {$(
        impl<$($g)*> Inner<$u> for $t where $($w)* {
            fn into_source(self) -> InnerSource<$u> {
                InnerSource::Publisher(Box::new(self))
            }
        }
    )*};
}

subscribed! {
    [U] FlowPublisher<U> => U where [U: Send + 'static];
    [U] Failed<U> => U where [U: Send + 'static];
    [U] Never<U> => U where [U: Send + 'static];
    [F, I] FnPublisher<F> => I::Item where [
        F: Fn() -> I + Send + Sync + 'static,
        I: IntoIterator + 'static,
        I::IntoIter: Send + 'static,
        I::Item: Send + 'static,
        FnPublisher<F>: Publisher<I::Item>,
    ];
    [F, U] PullPublisher<F> => U where [
        F: Send + 'static,
        U: Send + 'static,
        PullPublisher<F>: Publisher<U>,
    ];
}
