//! Broken Sink-as-subscriber and async-callback adapters, and the correct ones they break:
//! `rs_impl::compat::sink_subscriber` and `from_async` (correct with every knob off).
//!
//! * Sink: the adapter is `sink_subscriber` over a sink wrapper that breaks one thing: it says
//!   it is ready when the TCK's sink is not (and buffers what it is sent: the adapter then
//!   requests before the sink has room), or never closes the sink, or swallows the sink's
//!   error (the adapter never hears of it, so never cancels).
//! * Async: a hand-written adapter that spawns a task per callback (so callbacks overlap and
//!   its demand runs ahead of them), or `from_async` with glue that drops the error callback.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{ready, Context, Poll};

use futures::executor::ThreadPool;
use futures::Sink;
use rs_api::{Error, Subscriber, SubscriptionRef};
use rs_impl::compat::{from_async, sink_subscriber, AsyncSubscriber};
use rs_tck::adapters::{
    AsyncCallbackVerification, SinkSubscriberVerification, TestCallback, TestSink,
};
use rs_tck::publisher::BufferBound;

/// The executor of every adapter here.
pub(crate) fn pool() -> &'static ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        ThreadPool::builder()
            .pool_size(2)
            .create()
            .expect("a thread pool")
    })
}

/// The same pool as the adapters' runtime.
pub(crate) fn runtime() -> &'static rs_impl::Runtime {
    static RT: OnceLock<rs_impl::Runtime> = OnceLock::new();
    RT.get_or_init(|| rs_impl::Runtime::from_spawn(pool().clone()))
}

/// What to break in the sink adapter.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SinkKnobs {
    /// Ready whenever asked; what it is sent waits in a buffer for the real sink.
    pub(crate) ready_lie: bool,
    /// `poll_close` does not reach the sink.
    pub(crate) no_close: bool,
    /// A sink error turns into `Pending`, for ever.
    pub(crate) swallow_errors: bool,
}

struct Wrapped {
    inner: TestSink<u64>,
    knobs: SinkKnobs,
    buffer: VecDeque<u64>,
}

impl Wrapped {
    /// Moves the buffer into the real sink as it has room.
    fn push_buffer(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        while let Some(x) = self.buffer.pop_front() {
            match Pin::new(&mut self.inner).poll_ready(cx) {
                Poll::Ready(Ok(())) => Pin::new(&mut self.inner).start_send(x)?,
                Poll::Ready(Err(e)) => return self.error(e),
                Poll::Pending => {
                    self.buffer.push_front(x);
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(Ok(()))
    }

    fn error(&self, e: Error) -> Poll<Result<(), Error>> {
        if self.knobs.swallow_errors {
            Poll::Pending // BUG: the adapter never hears of the failure
        } else {
            Poll::Ready(Err(e))
        }
    }
}

impl Sink<u64> for Wrapped {
    type Error = Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        if self.knobs.ready_lie {
            let _ = self.push_buffer(cx);
            return Poll::Ready(Ok(())); // BUG: ready whatever the sink says
        }
        match Pin::new(&mut self.inner).poll_ready(cx) {
            Poll::Ready(Err(e)) => self.error(e),
            other => other,
        }
    }

    fn start_send(mut self: Pin<&mut Self>, item: u64) -> Result<(), Error> {
        if self.knobs.ready_lie {
            self.buffer.push_back(item);
            return Ok(());
        }
        Pin::new(&mut self.inner).start_send(item)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        ready!(self.push_buffer(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        ready!(self.push_buffer(cx))?;
        if self.knobs.no_close {
            return Poll::Ready(Ok(())); // BUG: the sink is never closed
        }
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// `sink_subscriber` over the TCK's sink, behind the knobs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BrokenSinkAdapter(pub(crate) SinkKnobs);

impl SinkSubscriberVerification for BrokenSinkAdapter {
    type Item = u64;

    fn create_subscriber(&self, sink: TestSink<u64>) -> impl Subscriber<u64> + 'static {
        let wrapped = Wrapped {
            inner: sink,
            knobs: self.0,
            buffer: VecDeque::new(),
        };
        let (s, done) = sink_subscriber(wrapped, runtime());
        done.detach();
        s
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn max_buffered(&self) -> BufferBound {
        BufferBound::AtMost(1)
    }
}

/// What to break in the async-callback adapter.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AsyncKnobs {
    /// A task per callback, each spawned without waiting for the one before; demand
    /// replenished on every element received.
    pub(crate) spawn_per_callback: bool,
    /// The error callback is never made.
    pub(crate) lose_error: bool,
}

/// The glue from `AsyncSubscriber` to the TCK's callback.
struct Glue {
    callback: TestCallback<u64>,
    lose_error: bool,
}

#[async_trait::async_trait]
impl AsyncSubscriber<u64> for Glue {
    async fn on_next(&mut self, item: u64) -> ControlFlow<()> {
        self.callback.on_next(item).await
    }

    async fn on_error(&mut self, error: Error) {
        if !self.lose_error {
            self.callback.on_error(error).await;
        } // else BUG: the error callback is never made
    }

    async fn on_complete(&mut self) {
        self.callback.on_complete().await
    }
}

/// BUG: spawns every callback as a task of its own, and requests one more per element.
struct Spawning {
    callback: TestCallback<u64>,
    subscription: Option<SubscriptionRef>,
}

impl Subscriber<u64> for Spawning {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if self.subscription.is_some() {
            subscription.cancel();
            return;
        }
        subscription.request(PREFETCH);
        self.subscription = Some(subscription);
    }

    fn on_next(&mut self, item: u64) {
        let call = self.callback.on_next(item);
        pool().spawn_ok(async move {
            let _ = call.await;
        });
        if let Some(s) = &self.subscription {
            s.request(1);
        }
    }

    fn on_error(&mut self, error: Error) {
        self.subscription = None;
        let call = self.callback.on_error(error);
        pool().spawn_ok(call);
    }

    fn on_complete(&mut self) {
        self.subscription = None;
        let call = self.callback.on_complete();
        pool().spawn_ok(call);
    }
}

const PREFETCH: u64 = 4;

/// The async-callback adapter behind the knobs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BrokenAsyncAdapter(pub(crate) AsyncKnobs);

impl AsyncCallbackVerification for BrokenAsyncAdapter {
    type Item = u64;

    fn create_subscriber(&self, callback: TestCallback<u64>) -> impl Subscriber<u64> + 'static {
        if self.0.spawn_per_callback {
            return Box::new(Spawning {
                callback,
                subscription: None,
            }) as Box<dyn Subscriber<u64>>;
        }
        let glue = Glue {
            callback,
            lose_error: self.0.lose_error,
        };
        let (s, done) = from_async(glue, PREFETCH as usize, runtime());
        done.detach();
        Box::new(s)
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn prefetch(&self) -> BufferBound {
        BufferBound::AtMost(PREFETCH)
    }
}
