//! `rs_impl::compat` (the async-Rust bridges) and the push source: the publisher adapters in
//! the publisher verification (with bounded buffering where they are built on an upstream) and
//! the loom mode, the subscriber adapters in the whitebox and blackbox verifications, and the
//! bridges to async Rust in the verifications made for them: the stream bridge
//! (`to_stream`), the sink subscriber and the async callback.
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `compat::from_stream` | publisher, loom | `stream::iter(0..n)` (unicast: `AtMost(1)`); failed: `from_try_stream` of one `Err`; bounded buffering on a tapped stream: at most 1 pulled and not delivered (the look-ahead) |
//! | `compat::from_stream_fn` | publisher, loom | a fresh `stream::iter(0..n)` per subscriber (declares `MANY`: the multi-subscriber checks run); failed: `from_try_stream_fn` of one `Err`; bounded buffering as above |
//! | `source::push(0)` | publisher, loom | a producer thread per publisher offers `0..n` (blocking, waiting for demand), then completes (unicast: `AtMost(1)`); failed: `fail` at once |
//! | `compat::to_stream → from_try_stream` | publisher, loom | the round trip: `range(0..n).to_stream(8)` published again (unicast); bounded buffering on a tapped `range`: at most 9 (the stream's prefetch of 8, and the island's look-ahead) |
//! | `compat::to_stream(8)`, `compat::to_stream(1)` | stream bridge | `PublisherStream` over the TCK's publisher; prefetch 8 (replenished by 4), 1 (by 1) |
//! | `compat::sink_subscriber(drain)` | subscriber whitebox, blackbox | `futures::sink::drain()`; the puppet's `signal_cancel` is the completion's `cancel` |
//! | `compat::sink_subscriber` | sink subscriber | over the TCK's sink; at most 1 requested and not yet accepted |
//! | `compat::from_async(Prefetch 4)` | subscriber whitebox, blackbox; async callback | an `AsyncSubscriber` that accepts everything (whitebox, blackbox), or one that calls the TCK's callback (async callback; prefetch 4); cancel as above |
//!
//! The stream publishers run each subscription as an island; the runtime (`exec()`, built
//! with `Runtime::from_spawn`, so that the registry also shows that any `Spawn` works) is one
//! futures `ThreadPool` for the whole run; in the loom build it is
//! `Runtime::thread_per_task` (a facade thread per task), so that loom sees the
//! islands. The consumer-side adapters (`sink_subscriber`, `from_async`) spawn their tasks on
//! the same executor.

use std::ops::ControlFlow;

use futures::Stream;
use rs_api::{BoxPublisher, BoxSubscriber, Error, Publisher, Subscriber};
use rs_impl::compat::{
    from_async, from_stream, from_stream_fn, from_try_stream, from_try_stream_fn, sink_subscriber,
    AsyncSubscriber, Completion, PublisherCompat,
};
use rs_impl::island::Runtime;
use rs_impl::source;
use rs_tck::adapters::{
    self, AsyncCallbackVerification, SinkSubscriberVerification, TestCallback, TestSink,
};
use rs_tck::instruments::UpstreamTap;
use rs_tck::loom;
use rs_tck::publisher::{self, BufferBound, PublisherVerification, SupportedSubscribers};
use rs_tck::stream::{self, StreamBridgeVerification};
use rs_tck::subscriber::{
    blackbox, whitebox, ProbeReporting, SubscriberBlackboxVerification, SubscriberPuppet,
    SubscriberWhiteboxVerification, WhiteboxSubscriberProbe,
};
use rs_tck::suite::Suite;

/// The compat suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify("compat::from_stream", FromStream),
        publisher::verify("compat::from_stream_fn", FromStreamFn),
        publisher::verify("source::push(0)", Push),
        publisher::verify("compat::to_stream → from_try_stream", RoundTrip),
        whitebox::verify("compat::sink_subscriber(drain)", Adapter::Sink),
        blackbox::verify("compat::sink_subscriber(drain)", Adapter::Sink),
        whitebox::verify("compat::from_async(Prefetch 4)", Adapter::Async),
        blackbox::verify("compat::from_async(Prefetch 4)", Adapter::Async),
        stream::verify("compat::to_stream(8)", ToStream(8)),
        stream::verify("compat::to_stream(1)", ToStream(1)),
        adapters::verify_sink("compat::sink_subscriber", SinkAdapter),
        adapters::verify_async("compat::from_async(Prefetch 4)", AsyncAdapter),
    ]
}

/// The loom suites of the publisher adapters, over the same verifications.
pub(crate) fn loom_suites() -> Vec<Suite> {
    vec![
        loom::verify_publisher("compat::from_stream", FromStream),
        loom::verify_publisher("compat::from_stream_fn", FromStreamFn),
        loom::verify_publisher("source::push(0)", Push),
        loom::verify_publisher("compat::to_stream → from_try_stream", RoundTrip),
    ]
}

/// The runtime of every compat entry: a futures thread pool of two threads (`Runtime::from_spawn`,
/// so that the registry also shows that any `Spawn` works) for the whole run; in the loom
/// build a facade thread per task, so that loom sees the tasks.
fn exec() -> &'static Runtime {
    static RT: std::sync::OnceLock<Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        #[cfg(not(rs_loom))]
        {
            Runtime::from_spawn(
                futures::executor::ThreadPool::builder()
                    .pool_size(2)
                    .name_prefix("rs-tck-compat-")
                    .create()
                    .expect("a futures thread pool"),
            )
        }
        #[cfg(rs_loom)]
        {
            Runtime::thread_per_task()
        }
    })
}

fn failed_error() -> Error {
    Error::msg("rs-tck: the failed publisher")
}

/// `compat::from_stream` over `stream::iter(0..n)`.
#[derive(Debug, Clone, Copy)]
struct FromStream;

impl PublisherVerification for FromStream {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        from_stream(futures::stream::iter(0..elements), exec())
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let one = futures::stream::iter([Err::<u64, Error>(failed_error())]);
        Some(from_try_stream(one, exec()))
    }

    /// Unicast: a stream can be read once.
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::AtMost(1)
    }

    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(from_stream(
            tap.stream(futures::stream::iter(0..elements)),
            exec(),
        ))
    }

    /// Polled once per requested element plus one look-ahead: one element held at most.
    fn max_buffered_from_upstream(&self) -> BufferBound {
        BufferBound::AtMost(1)
    }
}

/// `compat::from_stream_fn`: a fresh `stream::iter(0..n)` per subscriber.
#[derive(Debug, Clone, Copy)]
struct FromStreamFn;

impl PublisherVerification for FromStreamFn {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        from_stream_fn(move || futures::stream::iter(0..elements), exec())
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(from_try_stream_fn(
            || futures::stream::iter([Err::<u64, Error>(failed_error())]),
            exec(),
        ))
    }

    /// Cold: a fresh stream per subscriber.
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }

    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<u64> + Send + 'static> {
        let tap = tap.clone();
        Some(from_stream_fn(
            move || tap.stream(futures::stream::iter(0..elements)),
            exec(),
        ))
    }

    /// As `from_stream`, per subscriber.
    fn max_buffered_from_upstream(&self) -> BufferBound {
        BufferBound::AtMost(1)
    }
}

/// `source::push(0)` fed by a producer thread (a facade thread: a loom thread in the loom
/// build) that sends `0..n`, waiting for demand, then completes. It stops at the first
/// refused send (cancelled, or the publisher dropped unsubscribed).
#[derive(Debug, Clone, Copy)]
struct Push;

impl PublisherVerification for Push {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        let (producer, publisher) = source::push::<u64>(0);
        drop(rs_impl::loom::thread::spawn(move || {
            for i in 0..elements {
                if producer.blocking_send(i).is_err() {
                    return;
                }
            }
            producer.complete();
        }));
        publisher
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let (producer, publisher) = source::push::<u64>(0);
        producer.fail(failed_error());
        Some(publisher)
    }

    /// Unicast and hot (see `source::push`).
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::AtMost(1)
    }
}

/// Publisher → `Stream` → publisher: `range(0..n).to_stream(8)` through `from_try_stream`.
#[derive(Debug, Clone, Copy)]
struct RoundTrip;

impl PublisherVerification for RoundTrip {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        from_try_stream(source::range(0..elements).to_stream(8), exec())
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let stream = source::failed::<u64>(failed_error()).to_stream(8);
        Some(from_try_stream(stream, exec()))
    }

    /// Unicast: the stream in the middle can be read once.
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::AtMost(1)
    }

    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<u64> + Send + 'static> {
        let stream = tap.publisher(source::range(0..elements)).to_stream(8);
        Some(from_try_stream(stream, exec()))
    }

    /// The stream's prefetch of 8 (requested and not yet polled out), plus the island's one
    /// look-ahead element (polled out, not yet delivered).
    fn max_buffered_from_upstream(&self) -> BufferBound {
        BufferBound::AtMost(9)
    }
}

/// Which task-driven subscriber adapter.
#[derive(Debug, Clone, Copy)]
enum Adapter {
    Sink,
    Async,
}

/// Accepts every element.
struct Accept;

#[async_trait::async_trait]
impl AsyncSubscriber<u64> for Accept {
    async fn on_next(&mut self, _item: u64) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

impl Adapter {
    fn make(self) -> (BoxSubscriber<u64>, Completion) {
        match self {
            Adapter::Sink => {
                let (s, done) = sink_subscriber(futures::sink::drain(), exec());
                (Box::new(s), done)
            }
            Adapter::Async => {
                let (s, done) = from_async(Accept, 4, exec());
                (Box::new(s), done)
            }
        }
    }
}

/// The puppet: the adapters request by themselves as they consume, so `trigger_request` has
/// nothing to do; `signal_cancel` cancels through the completion.
struct Cancel(Completion);

impl SubscriberPuppet for Cancel {
    fn trigger_request(&self, _elements: u64) {}

    fn signal_cancel(&self) {
        self.0.cancel();
    }
}

impl SubscriberBlackboxVerification for Adapter {
    type Item = u64;

    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        let (s, done) = self.make();
        done.detach(); // the blackbox verification drives the adapter without its completion
        s
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

/// `compat::to_stream(prefetch)` over the TCK's publisher.
#[derive(Debug, Clone, Copy)]
struct ToStream(usize);

impl StreamBridgeVerification for ToStream {
    type Item = u64;

    fn create_stream(
        &self,
        publisher: BoxPublisher<u64>,
    ) -> impl Stream<Item = Result<u64, Error>> + Send + 'static {
        publisher.to_stream(self.0)
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    /// `prefetch` at first, then `prefetch / 2` each time that many were consumed.
    fn prefetch(&self) -> BufferBound {
        BufferBound::AtMost(self.0 as u64)
    }
}

/// `compat::sink_subscriber` over the TCK's sink.
#[derive(Debug, Clone, Copy)]
struct SinkAdapter;

impl SinkSubscriberVerification for SinkAdapter {
    type Item = u64;

    fn create_subscriber(&self, sink: TestSink<u64>) -> impl Subscriber<u64> + 'static {
        let (s, done) = sink_subscriber(sink, exec());
        done.detach(); // the verification watches the sink, not the completion
        s
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    /// One element requested per `poll_ready` that said the sink has room.
    fn max_buffered(&self) -> BufferBound {
        BufferBound::AtMost(1)
    }
}

/// `compat::from_async(_, 4, _)` calling the TCK's callback.
#[derive(Debug, Clone, Copy)]
struct AsyncAdapter;

/// The glue from `AsyncSubscriber` to the TCK's callback.
struct Glue(TestCallback<u64>);

#[async_trait::async_trait]
impl AsyncSubscriber<u64> for Glue {
    async fn on_next(&mut self, item: u64) -> ControlFlow<()> {
        self.0.on_next(item).await
    }

    async fn on_error(&mut self, error: Error) {
        self.0.on_error(error).await
    }

    async fn on_complete(&mut self) {
        self.0.on_complete().await
    }
}

impl AsyncCallbackVerification for AsyncAdapter {
    type Item = u64;

    fn create_subscriber(&self, callback: TestCallback<u64>) -> impl Subscriber<u64> + 'static {
        let (s, done) = from_async(Glue(callback), 4, exec());
        done.detach(); // the verification watches the callbacks, not the completion
        s
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    /// A stream of 4 under the callbacks: replenished by 2 as they finish.
    fn prefetch(&self) -> BufferBound {
        BufferBound::AtMost(4)
    }
}

impl SubscriberWhiteboxVerification for Adapter {
    type Item = u64;

    fn create_subscriber(
        &self,
        probe: WhiteboxSubscriberProbe<u64>,
    ) -> impl Subscriber<u64> + 'static {
        let (s, done) = self.make();
        ProbeReporting::new(s, probe, Cancel(done))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}
