//! A subscriber driven from outside: a [`Requester`] makes its requests and cancels, a
//! [`Signals`] receiver reads what the publisher sends. For bridges and event loops.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures::stream::{FusedStream, Stream};
use rs_api::{Error, Subscriber, SubscriptionRef};

use crate::handoff::{Bound, CompatError, Failure, InFlight, Polled, Reader, Ring, Writer};
use crate::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::loom::sync::{Arc, Mutex};

/// Creates a subscriber whose demand comes from a [`Requester`] and whose signals go to a
/// [`Signals`] receiver, with room for `capacity` elements.
///
/// # Contract
///
/// * **Demand** is only what the requester asks for, and **bounded by `capacity`**: a
///   request is granted up to the room left (`capacity` minus the elements requested and not
///   yet received through [`Signals`]), and [`Requester::request`] returns what it granted.
///   So at most `capacity` elements are ever buffered (what bounds memory), however much is
///   asked. Requests made before `on_subscribe` are kept and made when it arrives.
///   `request(0)` is passed on, so the publisher answers it with the rule 3.9 error.
/// * **Serial calls (2.7):** the requester's `request` and `cancel`, from any thread, are
///   serialised on the subscription (a lock held only for the call; the publisher may deliver
///   synchronously from inside it, which takes no lock here).
/// * **Rule 2.4:** no request starts once a terminal signal has arrived, and a terminal
///   signal that arrives while the requester is inside `request` on another thread waits
///   until that call returns (as [`PublisherStream`](crate::compat::PublisherStream)'s
///   requests do).
/// * **Signals:** every element as `Ok`, in order; `on_error` as one `Err` after them, then
///   the end; a publisher that sends more than requested yields
///   [`CompatError::Overflow`](crate::compat::CompatError::Overflow) and is cancelled.
///   [`Signals`] is a `Stream` (woken only when parked) with blocking [`recv`](Signals::recv)
///   and non-blocking [`try_recv`](Signals::try_recv).
/// * **Cancel:** [`Requester::cancel`], or dropping the [`Signals`] receiver (nobody reads),
///   cancels the subscription; a cancel before `on_subscribe` is kept. After a cancel the
///   receiver yields what was already buffered, then the end.
/// * **One subscription** (2.5): a second `on_subscribe` is cancelled.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::external;
///
/// let (subscriber, requester, mut signals) = external::<u32>(4);
/// rs_impl::source::range(0u32..10).subscribe(Box::new(subscriber));
/// assert_eq!(requester.request(100), 4); // room for 4
/// let first: Vec<u32> = (0..4).map(|_| signals.recv().unwrap().unwrap()).collect();
/// assert_eq!(first, vec![0, 1, 2, 3]);
/// assert_eq!(requester.request(2), 2);
/// assert_eq!(signals.recv().unwrap().unwrap(), 4);
/// requester.cancel();
/// ```
///
/// # Panics
///
/// If `capacity` is 0 (the crate's size rule: no element could ever be held).
#[track_caller]
pub fn external<T>(capacity: usize) -> (External<T>, Requester, Signals<T>) {
    assert!(
        capacity > 0,
        "subscriber::external(0): the capacity must be at least 1 (no element could ever be held)"
    );
    let ring = Ring::new(capacity);
    let control = Arc::new(Control {
        link: Mutex::new(Link::default()),
        room: AtomicU64::new(u64::try_from(capacity).unwrap_or(u64::MAX)),
        ended: AtomicBool::new(false),
        cancelled: AtomicBool::new(false),
        calls: InFlight::new(),
    });
    (
        External {
            // A foreign publisher: bounded by the free space, each element published at once.
            writer: Writer::new(ring.clone(), Bound::Space, 1),
            subscribed: false,
            control: control.clone(),
        },
        Requester {
            control: control.clone(),
        },
        Signals {
            // The head is released per element: the room the requester grants is free space.
            reader: Reader::new(ring, 1, false),
            control,
            capacity: u64::try_from(capacity).unwrap_or(u64::MAX),
            ended: false,
        },
    )
}

/// What the requester knows of the subscription.
#[derive(Default)]
struct Link {
    subscription: Option<SubscriptionRef>,
    /// Granted before `on_subscribe`, requested when it arrives.
    pending: u64,
    /// `request(0)` before `on_subscribe`: passed on when it arrives.
    zero: bool,
    cancelled: bool,
}

/// Shared by the three parts.
struct Control {
    /// Serialises the calls on the subscription (2.7).
    link: Mutex<Link>,
    /// Elements that may still be requested: `capacity` minus requested-and-not-received.
    room: AtomicU64,
    /// A terminal signal arrived: no more calls (2.4).
    ended: AtomicBool,
    /// Cancelled through the requester or by dropping the receiver.
    cancelled: AtomicBool,
    /// The requester's calls against the terminal signals (rule 2.4).
    calls: InFlight,
}

impl Control {
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        let mut link = self.link.lock();
        link.cancelled = true;
        if let Some(s) = link.subscription.take() {
            s.cancel();
        }
    }
}

/// The subscriber of [`external`]: subscribe it to the publisher.
pub struct External<T> {
    /// The ring's producer side: elements and terminal signals go through it.
    writer: Writer<T, Waker>,
    /// `on_subscribe` arrived (rule 2.5: a second one is cancelled).
    subscribed: bool,
    control: Arc<Control>,
}

impl<T> fmt::Debug for External<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("External")
            .field("writer", &self.writer)
            .field("subscribed", &self.subscribed)
            .finish_non_exhaustive()
    }
}

impl<T: Send> Subscriber<T> for External<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if std::mem::replace(&mut self.subscribed, true) {
            subscription.cancel(); // 2.5
            return;
        }
        let mut link = self.control.link.lock();
        if link.cancelled {
            drop(link);
            subscription.cancel();
            return;
        }
        link.subscription = Some(subscription.clone());
        let pending = std::mem::take(&mut link.pending);
        if std::mem::take(&mut link.zero) {
            subscription.request(0);
        } else if pending > 0 {
            subscription.request(pending);
        }
    }

    #[inline]
    fn on_next(&mut self, item: T) {
        // An element beyond the room granted (rule 1.1 broken) is an overflow.
        self.writer.send(item);
    }

    fn on_error(&mut self, error: Error) {
        self.control.calls.terminal(); // 2.4: a request in flight elsewhere returns first
        self.control.ended.store(true, Ordering::Release);
        self.writer.fail(error);
    }

    fn on_complete(&mut self) {
        self.control.calls.terminal();
        self.control.ended.store(true, Ordering::Release);
        self.writer.complete();
    }
}

/// Makes the requests and the cancel of an [`external`] subscriber, from any thread.
/// Cloneable; every clone drives the same subscription.
#[derive(Clone)]
pub struct Requester {
    control: Arc<Control>,
}

impl fmt::Debug for Requester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Requester")
            .field("room", &self.room())
            .finish_non_exhaustive()
    }
}

impl Requester {
    /// Requests up to `n` more elements; returns how many were granted (bounded by the room
    /// left, see [`external`]). `n == 0` is passed on to the publisher (its rule 3.9 error
    /// arrives through [`Signals`]) and grants nothing. After a terminal signal or a cancel,
    /// nothing is requested and 0 is returned.
    ///
    /// # Examples
    ///
    /// See [`external`].
    pub fn request(&self, n: u64) -> u64 {
        if self.control.ended.load(Ordering::Acquire) {
            return 0;
        }
        let granted = if n == 0 {
            0
        } else {
            match self
                .control
                .room
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |room| {
                    (room > 0).then(|| room - room.min(n))
                }) {
                Ok(room) => room.min(n),
                Err(_) => return 0,
            }
        };
        let mut link = self.control.link.lock();
        if link.cancelled {
            return 0;
        }
        match &link.subscription {
            Some(s) => {
                // Rule 2.4, under the lock that serialises the requester's calls.
                if !self.control.calls.begin() {
                    return 0;
                }
                s.request(if n == 0 { 0 } else { granted });
                self.control.calls.end();
            }
            None if n == 0 => link.zero = true,
            None => link.pending += granted,
        }
        granted
    }

    /// Cancels the subscription (now, or as soon as it arrives). Idempotent.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// let (s, requester, mut signals) = rs_impl::subscriber::external::<u8>(2);
    /// requester.cancel(); // before subscribing: kept
    /// rs_impl::source::never().subscribe(Box::new(s));
    /// assert_eq!(requester.request(1), 0);
    /// drop(signals);
    /// ```
    pub fn cancel(&self) {
        self.control.cancel();
    }

    /// How many elements may be requested right now.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_s, requester, _signals) = rs_impl::subscriber::external::<u8>(3);
    /// assert_eq!(requester.room(), 3);
    /// ```
    pub fn room(&self) -> u64 {
        self.control.room.load(Ordering::Acquire)
    }
}

/// The receiver of an [`external`] subscriber's signals: a `Stream` of `Result<T, Error>`,
/// or read with [`recv`](Self::recv) / [`try_recv`](Self::try_recv). Dropping it cancels the
/// subscription.
pub struct Signals<T> {
    reader: Reader<T, Waker>,
    control: Arc<Control>,
    /// The room when nothing is requested and not received.
    capacity: u64,
    ended: bool,
}

impl<T> fmt::Debug for Signals<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signals")
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl<T> Signals<T> {
    /// Blocks the thread until the next signal: `Some(Ok(element))`, `Some(Err(error))`, or
    /// `None` at the end. Not from inside an async task.
    ///
    /// # Examples
    ///
    /// See [`external`].
    pub fn recv(&mut self) -> Option<Result<T, Error>> {
        futures::executor::block_on(futures::StreamExt::next(self))
    }

    /// The next signal if one is there: `Poll::Pending` when nothing has arrived yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::task::Poll;
    /// use rs_api::Publisher;
    /// let (s, requester, mut signals) = rs_impl::subscriber::external::<u8>(2);
    /// rs_impl::source::from_iter([7u8]).subscribe(Box::new(s));
    /// assert!(signals.try_recv().is_pending()); // nothing requested yet
    /// requester.request(1);
    /// assert!(matches!(signals.try_recv(), Poll::Ready(Some(Ok(7)))));
    /// assert!(matches!(signals.try_recv(), Poll::Ready(None)));
    /// ```
    pub fn try_recv(&mut self) -> Poll<Option<Result<T, Error>>> {
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        Pin::new(self).poll_next(&mut cx)
    }
}

impl<T> Unpin for Signals<T> {}

impl<T> Stream for Signals<T> {
    type Item = Result<T, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        loop {
            match this.reader.poll() {
                Polled::Item(item) => {
                    this.control.room.fetch_add(1, Ordering::AcqRel);
                    return Poll::Ready(Some(Ok(item)));
                }
                Polled::Complete => {
                    this.ended = true;
                    this.control.ended.store(true, Ordering::Release);
                    return Poll::Ready(None);
                }
                Polled::Failed => return Poll::Ready(this.failed()),
                Polled::Empty => {}
            }
            // Elements are on their way while some are requested and not received.
            let room = this.control.room.load(Ordering::Relaxed);
            let on_the_way =
                usize::try_from(this.capacity.saturating_sub(room)).unwrap_or(usize::MAX);
            if this.reader.wait(cx.waker(), on_the_way) {
                return Poll::Pending;
            }
        }
    }
}

impl<T> Signals<T> {
    /// The buffer is drained and the publisher failed, overran or went away: the last item.
    fn failed(&mut self) -> Option<Result<T, Error>> {
        self.ended = true;
        if self.control.cancelled.load(Ordering::Acquire) {
            return None; // cancelled: what was buffered has been read; the end
        }
        match self.reader.failure() {
            Failure::Overrun { capacity } => {
                self.control.cancel();
                Some(Err(CompatError::Overflow { capacity }.into()))
            }
            Failure::Error(e) => {
                self.control.ended.store(true, Ordering::Release);
                Some(Err(e))
            }
            Failure::Abandoned => {
                self.control.ended.store(true, Ordering::Release);
                Some(Err(CompatError::Dropped.into()))
            }
        }
    }
}

impl<T> FusedStream for Signals<T> {
    fn is_terminated(&self) -> bool {
        self.ended
    }
}

impl<T> Drop for Signals<T> {
    fn drop(&mut self) {
        if !self.ended {
            self.control.cancel();
        }
    }
}
