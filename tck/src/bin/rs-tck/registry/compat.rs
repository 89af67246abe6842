//! `rs_impl::compat` (the async-Rust bridges) and the push source: the publisher adapters in
//! the publisher verification and the loom mode, the subscriber adapters in the whitebox and
//! blackbox verifications.
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `compat::from_stream` | publisher, loom | `stream::iter(0..n)` (unicast); failed: `from_try_stream` of one `Err` |
//! | `compat::from_stream_fn` | publisher, loom | a fresh `stream::iter(0..n)` per subscriber (the multi-subscriber checks run); failed: `from_try_stream_fn` of one `Err` |
//! | `source::push(0)` | publisher, loom | a producer thread per publisher offers `0..n` (blocking, waiting for demand), then completes; failed: `fail` at once |
//! | `compat::to_stream → from_try_stream` | publisher, loom | the round trip: `range(0..n).to_stream(8)` published again |
//! | `compat::sink_subscriber(drain)` | subscriber whitebox, blackbox | `futures::sink::drain()`; the puppet's `signal_cancel` is the completion's `cancel` |
//! | `compat::from_async(Prefetch 4)` | subscriber whitebox, blackbox | an `AsyncSubscriber` that accepts everything; cancel as above |
//!
//! The stream publishers run each subscription as an island; the runtime (`exec()`, built
//! with `Runtime::from_spawn`, so that the registry also shows that any `Spawn` works) is one
//! futures `ThreadPool` for the whole run; in the loom build it is
//! `Runtime::thread_per_task` (a facade thread per task), so that loom sees the
//! islands. The consumer-side adapters (`sink_subscriber`, `from_async`) spawn their tasks on
//! the same executor.

use std::ops::ControlFlow;

use rs_api::{BoxSubscriber, Error, Publisher, Subscriber};
use rs_impl::compat::{
    from_async, from_stream, from_stream_fn, from_try_stream, from_try_stream_fn, sink_subscriber,
    AsyncSubscriber, Completion, PublisherCompat,
};
use rs_impl::island::Runtime;
use rs_impl::source;
use rs_tck::loom;
use rs_tck::publisher::{self, PublisherVerification};
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
        self.make().0
    }

    fn create_element(&self, element: u64) -> u64 {
        element
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
