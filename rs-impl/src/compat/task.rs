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
#[must_use = "dropping a Completion does not cancel the adapter; call cancel() for that"]
pub struct Completion {
    outcome: oneshot::Receiver<Result<(), Error>>,
    abort: AbortHandle,
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
    (subscriber, Completion { outcome: rx, abort })
}
