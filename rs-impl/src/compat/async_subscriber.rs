//! Subscribers with async callbacks.

use std::ops::ControlFlow;

use crate::island::Runtime;
use futures::StreamExt;
use rs_api::Error;

use super::stream::StreamSubscriber;
use super::task::{spawn_consumer, yield_now, Completion, POLL_BUDGET};

/// A subscriber written with async callbacks: **its awaiting is its backpressure**. The next
/// element is not handed over before `on_next` has finished, and elements are requested only
/// as they are consumed (see [`from_async`]). Return [`ControlFlow::Break`] from `on_next`
/// to cancel the subscription.
///
/// Built on `async-trait`, so each call allocates its future (one allocation per element);
/// the synchronous [`Subscriber`](rs_api::Subscriber) trait is the allocation-free path.
///
/// # Examples
///
/// ```
/// use std::ops::ControlFlow;
/// use rs_api::Publisher;
/// use rs_impl::compat::{from_async, AsyncSubscriber};
///
/// struct Store(std::sync::Arc<std::sync::Mutex<Vec<u32>>>);
///
/// #[async_trait::async_trait]
/// impl AsyncSubscriber<u32> for Store {
///     async fn on_next(&mut self, item: u32) -> ControlFlow<()> {
///         futures::future::ready(()).await; // an async write, say
///         self.0.lock().unwrap().push(item);
///         if item == 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
///     }
/// }
///
/// let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
/// let stored = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
/// let (subscriber, done) = from_async(Store(stored.clone()), 4, &runtime);
/// rs_impl::source::range(0u32..).subscribe(Box::new(subscriber));
/// done.wait().unwrap(); // Break cancels the endless source and ends well
/// assert_eq!(*stored.lock().unwrap(), vec![0, 1, 2, 3]);
/// ```
#[async_trait::async_trait]
pub trait AsyncSubscriber<T: Send + 'static>: Send {
    /// Receives the next element. The adapter waits for the returned future before it hands
    /// over the next one; `Break` cancels the subscription (no terminal callback follows).
    async fn on_next(&mut self, item: T) -> ControlFlow<()>;

    /// Receives the terminal failure. The default ignores it (the [`Completion`] reports it).
    async fn on_error(&mut self, error: Error) {
        drop(error);
    }

    /// Receives successful completion. The default does nothing.
    async fn on_complete(&mut self) {}
}

/// Adapts an [`AsyncSubscriber`] into a [`Subscriber`](rs_api::Subscriber): returns the
/// subscriber to subscribe and the [`Completion`] of the task (spawned on `runtime`) that
/// runs the callbacks.
///
/// # Contract
///
/// * **Demand and bound:** the callbacks read a [`PublisherStream`](super::PublisherStream)
///   of `prefetch`: at most `prefetch` elements are requested and not yet handed to `on_next`
///   (replenished in halves as `on_next` calls finish).
/// * **Serial callbacks:** one at a time, on the executor's task; `on_error` or `on_complete`
///   last, after every element.
/// * **Cancel:** `ControlFlow::Break` from `on_next`, or [`Completion::cancel`], drops the
///   stream and so cancels upstream; the completion resolves to `Ok(())` (Break) or
///   [`Cancelled`](crate::subscriber::Cancelled).
/// * **Panics:** a panicking callback cancels upstream; the completion resolves to
///   [`CompatError::SubscriberPanicked`](super::CompatError::SubscriberPanicked).
///
/// # Panics
///
/// If `prefetch` is 0 (the crate's size rule).
///
/// # Examples
///
/// See [`AsyncSubscriber`].
#[track_caller]
pub fn from_async<T, A>(
    subscriber: A,
    prefetch: usize,
    runtime: &Runtime,
) -> (StreamSubscriber<T>, Completion)
where
    T: Send + 'static,
    A: AsyncSubscriber<T> + 'static,
{
    spawn_consumer(runtime, prefetch, move |mut stream| async move {
        let mut subscriber = subscriber;
        let mut budget = POLL_BUDGET;
        while let Some(item) = stream.next().await {
            budget -= 1;
            if budget == 0 {
                // Ready callbacks on a ready stream could keep one poll going forever: yield
                // to the executor (which also sees a cancel).
                budget = POLL_BUDGET;
                yield_now().await;
            }
            match item {
                Ok(item) => {
                    if subscriber.on_next(item).await.is_break() {
                        return Ok(()); // dropping the stream cancels upstream
                    }
                }
                Err(e) => {
                    subscriber.on_error(e.clone()).await;
                    return Err(e);
                }
            }
        }
        subscriber.on_complete().await;
        Ok(())
    })
}
