//! [`UpstreamTap`]: counts what an implementation takes from its upstream, for the checks of
//! bounded buffering.

use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use rs_api::{BoxSubscriber, Error, Publisher, Subscriber, Subscription, SubscriptionRef};

#[derive(Debug, Default)]
struct Counts {
    /// Demand requested from tapped publishers (saturating).
    requested: AtomicU64,
    /// Items pulled out of tapped streams.
    pulled: AtomicU64,
    /// Elements tapped publishers delivered.
    delivered: AtomicU64,
}

fn saturating_add(counter: &AtomicU64, n: u64) {
    let _ = counter.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
        Some(c.saturating_add(n))
    });
}

/// A tap on an implementation's upstream: wrap the upstream in it ([`publisher`](Self::publisher)
/// or [`stream`](Self::stream)) where your factory builds the implementation, and the TCK reads
/// how much the implementation took — demand requested from an upstream publisher, items pulled
/// from an upstream stream — against what its own subscriber received. That difference is what
/// the implementation asked for and has not passed on: outstanding upstream demand plus the
/// elements it holds. The bounded-buffering checks hold it within the buffer the verification
/// declares ([`PublisherVerification::create_publisher_on_upstream`](crate::publisher::PublisherVerification::create_publisher_on_upstream)).
///
/// Cheap to clone: clones share the counts.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// use rs_tck::instruments::UpstreamTap;
///
/// let tap = UpstreamTap::new();
/// let upstream = tap.publisher(rs_impl::source::range(0u64..10));
/// let (s, result) = collect(RequestStrategy::Prefetch(4));
/// upstream.subscribe(Box::new(s));
/// assert_eq!(result.wait().unwrap().len(), 10);
/// assert!(tap.taken() >= 10);
/// assert_eq!(tap.delivered(), 10);
/// ```
#[derive(Debug, Clone, Default)]
pub struct UpstreamTap {
    counts: Arc<Counts>,
}

impl UpstreamTap {
    /// A tap that has counted nothing yet.
    pub fn new() -> Self {
        UpstreamTap::default()
    }

    /// `upstream`, counted: every `request(n)` made on its subscriptions, every element it
    /// delivers.
    pub fn publisher<P>(&self, upstream: P) -> TappedPublisher<P> {
        TappedPublisher {
            inner: upstream,
            tap: self.clone(),
        }
    }

    /// `upstream`, counted: every item pulled out of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::StreamExt;
    ///
    /// let tap = rs_tck::instruments::UpstreamTap::new();
    /// let stream = tap.stream(futures::stream::iter(0u8..3));
    /// let items: Vec<u8> = futures::executor::block_on(stream.collect());
    /// assert_eq!((items.len(), tap.taken()), (3, 3));
    /// ```
    pub fn stream<S: Stream>(&self, upstream: S) -> TappedStream<S> {
        TappedStream {
            inner: Box::pin(upstream),
            tap: self.clone(),
        }
    }

    /// What the implementation took from its upstream so far: the demand it requested from
    /// tapped publishers (saturating at `u64::MAX`) plus the items it pulled from tapped
    /// streams.
    pub fn taken(&self) -> u64 {
        self.counts
            .requested
            .load(Ordering::Acquire)
            .saturating_add(self.counts.pulled.load(Ordering::Acquire))
    }

    /// The elements tapped publishers delivered, plus the items pulled from tapped streams.
    pub fn delivered(&self) -> u64 {
        self.counts
            .delivered
            .load(Ordering::Acquire)
            .saturating_add(self.counts.pulled.load(Ordering::Acquire))
    }
}

/// A publisher on an [`UpstreamTap`] (see [`UpstreamTap::publisher`]).
#[derive(Debug, Clone)]
pub struct TappedPublisher<P> {
    inner: P,
    tap: UpstreamTap,
}

impl<T, P> Publisher<T> for TappedPublisher<P>
where
    T: Send + 'static,
    P: Publisher<T>,
{
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        self.inner.subscribe(Box::new(TappedSubscriber {
            inner: subscriber,
            tap: self.tap.clone(),
        }));
    }
}

struct TappedSubscriber<T> {
    inner: BoxSubscriber<T>,
    tap: UpstreamTap,
}

impl<T> Subscriber<T> for TappedSubscriber<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.inner.on_subscribe(Arc::new(TappedSubscription {
            inner: subscription,
            tap: self.tap.clone(),
        }));
    }

    fn on_next(&mut self, item: T) {
        saturating_add(&self.tap.counts.delivered, 1);
        self.inner.on_next(item);
    }

    fn on_error(&mut self, error: Error) {
        self.inner.on_error(error);
    }

    fn on_complete(&mut self) {
        self.inner.on_complete();
    }
}

struct TappedSubscription {
    inner: SubscriptionRef,
    tap: UpstreamTap,
}

impl Subscription for TappedSubscription {
    fn request(&self, n: u64) {
        saturating_add(&self.tap.counts.requested, n);
        self.inner.request(n);
    }

    fn cancel(&self) {
        self.inner.cancel();
    }
}

/// A stream on an [`UpstreamTap`] (see [`UpstreamTap::stream`]).
pub struct TappedStream<S> {
    inner: Pin<Box<S>>,
    tap: UpstreamTap,
}

impl<S> fmt::Debug for TappedStream<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TappedStream")
            .field("tap", &self.tap)
            .finish_non_exhaustive()
    }
}

impl<S: Stream> Stream for TappedStream<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(Some(_)) = &polled {
            saturating_add(&self.tap.counts.pulled, 1);
        }
        polled
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}
