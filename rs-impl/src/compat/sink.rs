//! A futures `Sink` as a subscriber.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::island::Runtime;
use futures::sink::Sink;
use futures::stream::Stream;
use rs_api::Error;

use super::stream::{PublisherStream, StreamSubscriber};
use super::task::{spawn_consumer, Completion, POLL_BUDGET};

/// Feeds a futures [`Sink`] from a publisher: returns the subscriber to subscribe and the
/// [`Completion`] of the task (spawned on `runtime`) that drives the sink.
///
/// # Contract
///
/// * **Demand follows the sink's capacity:** the task asks the sink `poll_ready` first, and
///   only when it is ready does it want the next element, which requests exactly 1. So at most
///   one element is requested and not yet accepted by the sink (the bound: one buffer slot).
/// * **Flushing:** whenever upstream has nothing ready, the sink is flushed (elements never
///   sit in the sink's own buffer while the publisher is idle).
/// * **Completion:** `on_complete` flushes and closes the sink (`poll_close`); the
///   [`Completion`] then resolves to `Ok(())`.
/// * **Errors:** `on_error` resolves the completion to that error without closing the sink
///   (it is dropped). A sink error (from `poll_ready`, `start_send`, `poll_flush` or
///   `poll_close`) cancels the subscription upstream and resolves the completion to it.
/// * **Cancel:** [`Completion::cancel`] stops the task and cancels upstream.
/// * **Threads:** the publisher signals the subscriber on its threads; the sink is driven only
///   by the task, on the executor.
///
/// # Examples
///
/// ```
/// use futures::StreamExt;
/// use rs_api::Publisher;
///
/// let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
/// let (tx, rx) = futures::channel::mpsc::channel::<u32>(4); // a bounded sink
/// let (subscriber, done) = rs_impl::compat::sink_subscriber(tx, &runtime);
/// rs_impl::source::range(0u32..10).subscribe(Box::new(subscriber));
/// let received: Vec<u32> = futures::executor::block_on(rx.collect());
/// done.wait().unwrap();
/// assert_eq!(received, (0..10).collect::<Vec<_>>());
/// ```
pub fn sink_subscriber<T, Si>(sink: Si, runtime: &Runtime) -> (StreamSubscriber<T>, Completion)
where
    T: Send + 'static,
    Si: Sink<T> + Send + 'static,
    Si::Error: std::error::Error + Send + Sync + 'static,
{
    spawn_consumer(runtime, 1, move |stream| Feed {
        sink: Box::pin(sink),
        stream,
        flushed: true,
        closing: false,
    })
}

/// Drives the sink from the stream, asking the sink for capacity before the stream for an
/// element.
struct Feed<T, Si> {
    sink: Pin<Box<Si>>,
    stream: PublisherStream<T>,
    /// Nothing sent since the last flush.
    flushed: bool,
    /// Upstream completed: only closing is left.
    closing: bool,
}

impl<T, Si> Future for Feed<T, Si>
where
    Si: Sink<T>,
    Si::Error: std::error::Error + Send + Sync + 'static,
{
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let mut budget = POLL_BUDGET;
        loop {
            if budget == 0 {
                // A fast source into a fast sink could keep one poll going forever: yield to
                // the executor (which also sees a cancel) and come back at once.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            budget -= 1;
            if this.closing {
                return this.sink.as_mut().poll_close(cx).map_err(super::into_error);
            }
            ready!(this.sink.as_mut().poll_ready(cx)).map_err(super::into_error)?;
            match Pin::new(&mut this.stream).poll_next(cx) {
                Poll::Ready(Some(Ok(item))) => {
                    this.sink
                        .as_mut()
                        .start_send(item)
                        .map_err(super::into_error)?;
                    this.flushed = false;
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(None) => this.closing = true,
                Poll::Pending => {
                    if !this.flushed {
                        ready!(this.sink.as_mut().poll_flush(cx)).map_err(super::into_error)?;
                        this.flushed = true;
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}
