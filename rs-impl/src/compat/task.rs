//! The adapters that consume a [`PublisherStream`] on a task: their shared plumbing and the
//! [`Completion`] handle they return.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::channel::oneshot;
use futures::future::{AbortHandle, Abortable, FutureExt};
use rs_api::Error;

use super::stream::{stream_subscriber, PublisherStream, StreamSubscriber};
use super::CompatError;
use crate::island::Runtime;
use crate::panics;
use crate::subscriber::Cancelled;

/// How a task-driven adapter ended: a future, and a handle to cancel it.
///
/// Resolves to `Ok(())` when the stream completed (and the adapter finished: a sink closed,
/// an async subscriber's `on_complete` returned), or to the error: the publisher's
/// `on_error`, the sink's error, [`Cancelled`] after [`cancel`](Self::cancel),
/// [`CompatError::SubscriberPanicked`], or [`CompatError::TaskDropped`] if the executor
/// dropped the task.
///
/// **Dropping the completion cancels the adapter** (as dropping a [`Stream`](futures::Stream),
/// a futures `RemoteHandle` or the crate's [`Handle`](crate::subscriber::Handle) does): an
/// endless stream does not keep running on a pool thread with nobody listening. To let the
/// adapter run to its end without keeping the completion, call [`detach`](Self::detach).
/// Awaiting it (or [`wait`](Self::wait)) to the end and then dropping it cancels nothing: the
/// adapter has finished.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
///
/// let runtime = rs_impl::Runtime::with_threads(1).unwrap();
/// let (sink, mut rx) = futures::channel::mpsc::channel::<u64>(1);
/// let (s, done) = rs_impl::compat::sink_subscriber(sink, &runtime);
/// rs_impl::source::range(0u64..).subscribe(Box::new(s));
/// assert_eq!(futures::executor::block_on_stream(&mut rx).take(3).count(), 3);
/// drop(done); // cancels: the endless range stops, and the sink is dropped
/// // Then the end: at most what the channel held (its buffer and the sender's slot) and what
/// // the adapter's poll in progress still sends (it yields every 128 elements, and sees the
/// // cancel there).
/// assert!(futures::executor::block_on_stream(rx).count() <= 128 + 2);
/// ```
#[must_use = "dropping a Completion cancels the adapter; call detach() to let it run"]
pub struct Completion {
    outcome: oneshot::Receiver<Result<(), Error>>,
    abort: AbortHandle,
    /// Dropping the completion leaves the adapter alone.
    detached: bool,
}

impl Drop for Completion {
    fn drop(&mut self) {
        if !self.detached {
            self.abort.abort(); // a no-op once the task has finished
        }
    }
}

impl fmt::Debug for Completion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Completion")
            .field("cancelled", &self.abort.is_aborted())
            .finish_non_exhaustive()
    }
}

impl Completion {
    /// Cancels the adapter from any thread: its task stops at its next poll, dropping the
    /// stream, which cancels the subscription upstream. The outcome becomes [`Cancelled`]
    /// unless the adapter had finished already.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::Cancelled;
    ///
    /// let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
    /// let (sink, _rx) = futures::channel::mpsc::channel::<u8>(1);
    /// let (s, done) = rs_impl::compat::sink_subscriber(sink, &runtime);
    /// rs_impl::source::never().subscribe(Box::new(s));
    /// done.cancel();
    /// let outcome = done.wait();
    /// assert!(outcome.unwrap_err().is::<Cancelled>());
    /// ```
    pub fn cancel(&self) {
        self.abort.abort();
    }

    /// Lets the adapter run to its end without this completion: dropping it no longer
    /// cancels, and the outcome is not observed.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    ///
    /// let runtime = rs_impl::Runtime::with_threads(1).unwrap();
    /// let (sink, rx) = futures::channel::mpsc::channel::<u64>(4);
    /// let (s, done) = rs_impl::compat::sink_subscriber(sink, &runtime);
    /// done.detach(); // no completion: the adapter still runs to the end
    /// rs_impl::source::range(0u64..10).subscribe(Box::new(s));
    /// assert_eq!(futures::executor::block_on_stream(rx).count(), 10);
    /// ```
    pub fn detach(mut self) {
        self.detached = true;
    }

    /// Blocks the thread until the adapter ends (not from inside an async task).
    ///
    /// # Errors
    ///
    /// As the future's output.
    ///
    /// # Examples
    ///
    /// See [`sink_subscriber`](super::sink_subscriber).
    pub fn wait(self) -> Result<(), Error> {
        futures::executor::block_on(self)
    }
}

impl Future for Completion {
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.outcome
            .poll_unpin(cx)
            .map(|r| r.unwrap_or_else(|_| Err(CompatError::TaskDropped.into())))
    }
}

/// Spawns `consume(stream)` on `runtime` for a fresh [`PublisherStream`] of `prefetch`, and
/// returns the subscriber that feeds it with the [`Completion`] of the task. The task is
/// cancellable (the stream is dropped, so the subscription is cancelled) and a panic in it
/// becomes [`CompatError::SubscriberPanicked`].
#[track_caller]
pub(crate) fn spawn_consumer<T, F, Fut>(
    runtime: &Runtime,
    prefetch: usize,
    consume: F,
) -> (StreamSubscriber<T>, Completion)
where
    T: Send + 'static,
    F: FnOnce(PublisherStream<T>) -> Fut,
    Fut: Future<Output = Result<(), Error>> + Send + 'static,
{
    let (subscriber, stream) = stream_subscriber(prefetch);
    let (abort, registration) = AbortHandle::new_pair();
    let (tx, rx) = oneshot::channel();
    let work = Abortable::new(
        AssertUnwindSafe(consume(stream)).catch_unwind(),
        registration,
    );
    runtime.spawn(async move {
        let outcome = match work.await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(payload)) => Err(CompatError::SubscriberPanicked {
                message: panics::panic_message(&*payload),
            }
            .into()),
            Err(_aborted) => Err(Error::new(Cancelled)),
        };
        let _ = tx.send(outcome); // nobody listening is fine
    });
    (
        subscriber,
        Completion {
            outcome: rx,
            abort,
            detached: false,
        },
    )
}

/// Elements a consuming task moves in one poll at most before it yields to the executor (so
/// that a fast source and a fast consumer neither starve the executor's other tasks nor keep
/// a cancel from being seen).
pub(crate) const POLL_BUDGET: usize = 128;

/// Returns `Pending` once (waking the task at once), then `Ready`: a yield to the executor.
#[cfg(feature = "async-subscriber")]
pub(crate) fn yield_now() -> impl Future<Output = ()> {
    let mut yielded = false;
    std::future::poll_fn(move |cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
}
