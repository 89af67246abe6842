//! Publisher → `Stream`: [`PublisherStream`] and the subscriber that feeds it.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use std::task::Waker;

use futures::stream::{FusedStream, Stream};
use rs_api::{Error, Publisher, Subscriber, SubscriptionRef};

use super::CompatError;
use crate::handoff::{Bound, Failure, Polled, Reader, Ring, Writer};

/// How a stream asks for elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prefetch {
    /// The first request, and the most ever outstanding or buffered.
    prefetch: u64,
    /// The replenishing request, made once that many elements have been consumed.
    batch: u64,
    /// Consumed since the last replenishing request.
    consumed: u64,
    /// Requested and not yet consumed.
    outstanding: u64,
    /// The first request was made.
    started: bool,
}

impl Prefetch {
    pub(crate) fn new(prefetch: usize) -> Self {
        let prefetch = u64::try_from(prefetch.max(1)).unwrap_or(u64::MAX);
        Prefetch {
            prefetch,
            batch: (prefetch / 2).max(1),
            consumed: 0,
            outstanding: 0,
            started: false,
        }
    }

    /// The request due now, if any: the prefetch at first, then a batch once a batch has been
    /// consumed. Asked lazily, when the consumer wants its next element, so that nothing is
    /// requested before it is wanted.
    #[inline]
    fn due(&mut self) -> Option<u64> {
        let n = if !self.started {
            self.started = true;
            self.prefetch
        } else if self.consumed >= self.batch {
            self.consumed -= self.batch;
            self.batch
        } else {
            return None;
        };
        self.outstanding = self.outstanding.saturating_add(n);
        Some(n)
    }

    /// Counts one consumed element.
    #[inline]
    fn consumed_one(&mut self) {
        self.consumed += 1;
        self.outstanding = self.outstanding.saturating_sub(1);
    }
}

/// The subscriber side of a [`PublisherStream`]: publishes what it receives into the stream's
/// bounded buffer (the crate's hand-off ring, one element at a time). Made by
/// [`stream_subscriber`], or inside [`to_stream`].
///
/// It never calls its subscription itself (the stream does, from `poll_next` and its `Drop`,
/// so those calls are serial: rule 2.7), except to cancel a second subscription (2.5) or one
/// that arrives after the stream was dropped.
pub struct StreamSubscriber<T> {
    writer: Writer<T, Waker>,
    subscribed: bool,
}

impl<T> fmt::Debug for StreamSubscriber<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamSubscriber")
            .field("subscribed", &self.subscribed)
            .field("buffer", &self.writer.ring().size())
            .finish()
    }
}

impl<T: Send> Subscriber<T> for StreamSubscriber<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if std::mem::replace(&mut self.subscribed, true) {
            subscription.cancel(); // 2.5
            return;
        }
        if let Some(orphan) = self.writer.subscribed(subscription) {
            orphan.cancel(); // the stream is gone already
        }
    }

    #[inline]
    fn on_next(&mut self, item: T) {
        // An element beyond the buffer (rule 1.1 broken) ends the stream with `Overflow`.
        self.writer.send(item);
    }

    fn on_error(&mut self, error: Error) {
        self.writer.fail(error);
    }

    fn on_complete(&mut self) {
        self.writer.complete();
    }
}

/// A publisher read as a `Stream` of `Result<T, Error>`: bounded and demand-driven.
///
/// # Contract
///
/// * **Demand:** nothing is requested before the first `poll_next`; then `prefetch`, and
///   `prefetch / 2` (at least 1) each time that many have been consumed, asked when the next
///   element is wanted. So at most `prefetch` elements are ever requested and not consumed.
/// * **Bound (what bounds memory):** one buffer of `prefetch` slots rounded up to a power of
///   two, allocated once. A publisher that sends more than requested (rule 1.1) does not grow
///   it: the excess is dropped, upstream is cancelled and the stream yields
///   [`CompatError::Overflow`].
/// * **Items:** every element as `Ok`, in order; `on_error` as one `Err` after the elements
///   before it, then the end; `on_complete` as the end. A publisher that drops the subscriber
///   without a terminal signal yields [`CompatError::Dropped`], then the end. After the end,
///   `None` forever ([`FusedStream`]).
/// * **Waking:** the waker of the last `Pending` poll is woken when an element or a signal
///   arrives, from the publisher's thread, and only if the stream is parked: no polling loop,
///   any executor. While requested elements are on their way, `poll_next` first watches the
///   buffer for a bounded moment (a spin of 127 pause hints, about 3 µs, never a yield)
///   before it parks, for a **run** of them (32, or as many as are on their way), not for the
///   first: a producer in the middle of a burst publishes its next elements sooner than a
///   park and a wake-up take, and a consumer that took each element the moment it appeared
///   would pull the buffer's state across cores twice per element. So an element that
///   arrives alone waits at most that moment longer.
/// * **Cancel on drop:** dropping the stream before the end cancels the subscription (from the
///   dropping thread; rule 3.13 then makes the publisher drop the subscriber), unless the
///   publisher's terminal signal has arrived already (then the subscription is over: rule
///   2.4), and the buffered elements are dropped. All calls on the subscription come from `poll_next` and `Drop`,
///   hence serial (rule 2.7).
/// * **Rule 2.4:** no request starts once a terminal signal has arrived, even one still
///   waiting in the buffer behind elements; and `on_complete` / `on_error` arriving while
///   `poll_next` is inside `request` on another thread wait until that call returns, so no
///   call on the subscription runs after the terminal signal was received. (The cost: two
///   read-modify-writes and a short lock per request, not per element. A terminal signal
///   delivered synchronously inside the request, on its own thread, does not wait; a
///   publisher whose `request` blocks until its concurrent terminal signal returns would
///   deadlock with this, which rule 3.4 asks it not to do.)
///
/// # Examples
///
/// ```
/// use futures::StreamExt;
/// use rs_impl::compat::PublisherCompat;
///
/// let stream = rs_impl::source::range(1u64..=100).to_stream(16);
/// let sum = futures::executor::block_on(stream.map(Result::unwrap).fold(0, |a, x| async move { a + x }));
/// assert_eq!(sum, 5050);
/// ```
pub struct PublisherStream<T> {
    /// The ring's consumer end; it holds the subscription once `on_subscribe` handed it over.
    reader: Reader<T, Waker>,
    demand: Prefetch,
    ended: bool,
}

impl<T> fmt::Debug for PublisherStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublisherStream")
            .field("buffer", &self.reader.ring().size())
            .field("subscribed", &self.reader.has_subscription())
            .field("ended", &self.ended)
            .finish()
    }
}

/// A stream and the subscriber that feeds it, for subscribing yourself (see
/// [`PublisherStream`] for the contract; [`to_stream`] does both steps).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use futures::StreamExt;
///
/// let (subscriber, stream) = rs_impl::compat::stream_subscriber::<u8>(4);
/// rs_impl::source::from_iter([1u8, 2, 3]).subscribe(Box::new(subscriber));
/// let items: Vec<_> = futures::executor::block_on(stream.collect());
/// assert_eq!(items.into_iter().map(Result::unwrap).collect::<Vec<_>>(), vec![1, 2, 3]);
/// ```
///
/// # Panics
///
/// If `prefetch` is 0 (the crate's size rule: nothing could ever be requested).
#[track_caller]
pub fn stream_subscriber<T>(prefetch: usize) -> (StreamSubscriber<T>, PublisherStream<T>) {
    assert!(
        prefetch > 0,
        "a stream bridge's prefetch of 0: it must be at least 1 (nothing could ever be requested)"
    );
    let ring = Ring::new(prefetch);
    (
        StreamSubscriber {
            // A foreign publisher: bounded by the free space, each element published at once.
            writer: Writer::new(ring.clone(), Bound::Space, 1),
            subscribed: false,
        },
        PublisherStream {
            // The head is released per element, so the free space the publisher sees is
            // exact when the stream requests (its demand may reach the whole buffer).
            reader: Reader::new(ring, 1, false),
            demand: Prefetch::new(prefetch),
            ended: false,
        },
    )
}

/// Subscribes to `publisher` and returns the subscription as a [`PublisherStream`] that
/// requests `prefetch` elements at a time (replenishing in halves).
///
/// # Examples
///
/// ```
/// use futures::StreamExt;
/// use rs_api::Error;
///
/// let failing = rs_impl::source::failed::<u8>(Error::msg("boom"));
/// let items: Vec<_> = futures::executor::block_on(rs_impl::compat::to_stream(&failing, 8).collect());
/// assert_eq!(items.len(), 1);
/// assert_eq!(items[0].as_ref().unwrap_err().to_string(), "boom");
/// ```
///
/// # Panics
///
/// If `prefetch` is 0 (the crate's size rule).
#[track_caller]
pub fn to_stream<T, P>(publisher: &P, prefetch: usize) -> PublisherStream<T>
where
    T: Send + 'static,
    P: Publisher<T> + ?Sized,
{
    let (subscriber, stream) = stream_subscriber(prefetch);
    publisher.subscribe(Box::new(subscriber));
    stream
}

impl<T> PublisherStream<T> {
    /// The number of buffer slots (the prefetch rounded up to a power of two).
    ///
    /// # Examples
    ///
    /// ```
    /// let (_s, stream) = rs_impl::compat::stream_subscriber::<u8>(24);
    /// assert_eq!(stream.buffer_capacity(), 32);
    /// ```
    pub fn buffer_capacity(&self) -> usize {
        self.reader.ring().size()
    }

    /// Ends the stream: no more calls on the subscription (after the publisher's own end,
    /// leaving does not cancel it).
    fn end(&mut self) {
        self.ended = true;
        self.reader.leave();
    }

    /// How a stream whose buffer is drained ends when the publisher failed, overran or went
    /// away: the item to yield (then the end).
    fn failed(&mut self) -> Error {
        let error = match self.reader.failure() {
            Failure::Error(e) => e,
            Failure::Overrun { capacity } => CompatError::Overflow { capacity }.into(),
            Failure::Abandoned => CompatError::Dropped.into(),
        };
        // Leaving cancels an overrunning or vanished publisher, not one that signalled its end.
        self.end();
        error
    }
}

impl<T> Unpin for PublisherStream<T> {}

impl<T> Stream for PublisherStream<T> {
    type Item = Result<T, Error>;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        // The per-element path, kept small so that it inlines into the caller's loop: a
        // request when one is due, then the next element.
        if !this.ended && this.reader.has_subscription() {
            this.request_due();
            if let Polled::Item(item) = this.reader.poll() {
                this.demand.consumed_one();
                return Poll::Ready(Some(Ok(item)));
            }
        }
        this.poll_slow(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.ended {
            (0, Some(0))
        } else {
            (0, None)
        }
    }
}

impl<T> PublisherStream<T> {
    /// Rule 2.4: no request once a terminal signal has arrived (it may be waiting in the
    /// buffer behind elements not consumed yet), and a terminal signal that arrives meanwhile
    /// waits for this request to return (see `InFlight`).
    #[inline]
    fn request_due(&mut self) {
        if let Some(n) = self.demand.due() {
            self.reader.request(n);
        }
    }

    /// Everything but the next element: the end, the subscription, the park.
    #[cold]
    #[inline(never)]
    fn poll_slow(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, Error>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        loop {
            if self.reader.has_subscription() {
                self.request_due();
            }
            match self.reader.poll() {
                Polled::Item(item) => {
                    self.demand.consumed_one();
                    return Poll::Ready(Some(Ok(item)));
                }
                Polled::Complete => {
                    self.end();
                    return Poll::Ready(None);
                }
                Polled::Failed => return Poll::Ready(Some(Err(self.failed()))),
                Polled::Empty => {}
            }
            if !self.reader.has_subscription() && self.reader.take_subscription() {
                continue;
            }
            let on_the_way = usize::try_from(self.demand.outstanding).unwrap_or(usize::MAX);
            if self.reader.wait(cx.waker(), on_the_way) {
                return Poll::Pending;
            }
        }
    }
}

impl<T> FusedStream for PublisherStream<T> {
    fn is_terminated(&self) -> bool {
        self.ended
    }
}

impl<T> Drop for PublisherStream<T> {
    fn drop(&mut self) {
        // Before the end: cancels the subscription (taken, or handed over and never taken),
        // unless the publisher signalled its end already; drops the buffered elements.
        self.reader.leave();
    }
}
