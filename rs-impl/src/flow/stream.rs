//! [`StreamSource`]: a `futures::Stream` read inside an island.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures::Stream;
use rs_api::Error;

use crate::island::{Ctx, Notifier, Outlet, PortId, Ports, Stage};

/// The stream a [`StreamSource`] reads: elements or the error that ends it.
pub type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Error>> + Send>>;

/// A source emitting the items of a `futures::Stream` (`Ok` elements; the first `Err` fails
/// the stream), polled on the island with a waker that posts to the stage: a stream that is
/// not ready leaves the island free until it wakes.
///
/// It polls **one ahead** (like [`IterSource`](crate::flow::IterSource)), so that a finished or failed stream ends
/// without waiting for a pull that would only find the end (rules 1.2, 1.4, 1.5): right
/// away, and again after each push. The bound: at most one element held, the one that look
/// found, until the next pull. A panic in the stream fails it with
/// [`CompatError::StreamPanicked`](crate::compat::CompatError::StreamPanicked). The stream is
/// dropped at its end, when downstream cancels (even while it is pending), and when the
/// island stops.
pub struct StreamSource<T> {
    outlet: Outlet<T>,
    stream: Option<BoxStream<T>>,
    /// The element found ahead of a pull.
    held: Option<T>,
    /// Posts to this stage (made in `pre_start`, where the notifier is known).
    waker: Option<Waker>,
}

impl<T> fmt::Debug for StreamSource<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamSource").finish_non_exhaustive()
    }
}

impl<T: Send + 'static> StreamSource<T> {
    /// A source of `stream`'s items.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures::StreamExt;
    /// use rs_impl::flow::StreamSource;
    /// use rs_impl::island::{stages::CollectSink, GraphBuilder, Island};
    ///
    /// let mut g = GraphBuilder::new();
    /// let (o, i) = g.connection::<u32>();
    /// g.add_stage(StreamSource::new(o, Box::pin(futures::stream::iter(1..=3).map(Ok))));
    /// let (sink, collected) = CollectSink::new(i);
    /// g.add_stage(sink);
    /// futures::executor::block_on(Island::new(g.build().unwrap()));
    /// assert_eq!(collected.take().unwrap().unwrap(), vec![1, 2, 3]);
    /// ```
    pub fn new(outlet: Outlet<T>, stream: BoxStream<T>) -> Self {
        StreamSource {
            outlet,
            stream: Some(stream),
            held: None,
            waker: None,
        }
    }

    /// Pushes what is held if downstream pulled, then polls (with a pull to serve, or one
    /// ahead), until it holds one element nobody pulled, the stream is pending, or it ended.
    fn advance(&mut self, ctx: &mut Ctx<'_>) {
        loop {
            if let Some(x) = self.held.take() {
                if !ctx.is_available(self.outlet) {
                    self.held = Some(x);
                    return;
                }
                ctx.push(self.outlet, x);
            }
            let (Some(stream), Some(waker)) = (self.stream.as_mut(), self.waker.as_ref()) else {
                return;
            };
            let mut cx = Context::from_waker(waker);
            match catch_unwind(AssertUnwindSafe(|| stream.as_mut().poll_next(&mut cx))) {
                Ok(Poll::Ready(Some(Ok(x)))) => self.held = Some(x),
                Ok(Poll::Pending) => return,
                Ok(Poll::Ready(None)) => {
                    self.drop_stream();
                    ctx.complete(self.outlet);
                    return;
                }
                Ok(Poll::Ready(Some(Err(e)))) => {
                    self.drop_stream();
                    ctx.fail(self.outlet, e);
                    return;
                }
                Err(payload) => {
                    self.drop_stream();
                    let e = crate::compat::CompatError::StreamPanicked {
                        message: crate::panics::panic_message(&*payload),
                    };
                    ctx.fail(self.outlet, e.into());
                    return;
                }
            }
        }
    }

    fn drop_stream(&mut self) {
        crate::panics::drop_guarded(self.stream.take());
        crate::panics::drop_guarded(self.held.take());
    }
}

/// The waker of a [`StreamSource`]'s stream: posts to the stage.
struct PostToStage(Notifier);

impl std::task::Wake for PostToStage {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.notify();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.notify();
    }
}

impl<T: Send + 'static> Stage for StreamSource<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.outlet(self.outlet);
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        // The waker holds a std `Arc` (what `Waker::from` takes); the notifier inside is the
        // island's.
        #[allow(clippy::disallowed_types)]
        let wake = std::sync::Arc::new(PostToStage(ctx.notifier()));
        self.waker = Some(Waker::from(wake));
        self.advance(ctx);
    }
    #[inline]
    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.advance(ctx);
    }
    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        self.advance(ctx);
    }
    fn on_downstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.drop_stream(); // cancelled: promptly, even while the stream is pending (3.13)
        ctx.complete_stage();
    }
    fn post_stop(&mut self) {
        self.drop_stream();
    }
}
