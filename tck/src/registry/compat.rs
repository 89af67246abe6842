//! The registry's entries for `rs_impl::compat` (the async-Rust bridges) and the push source.
//!
//! | implementation | verification | notes |
//! |---|---|---|
//! | `compat::from_stream` | publisher | `stream::iter(0..n)` on a shared futures `ThreadPool`; failed: `from_try_stream` of one `Err` |
//! | `source::push(0)` | publisher | a producer thread per subscription offers `0..n` (blocking, waiting for demand), then completes; failed: `fail` at once |
//! | `compat::to_stream → from_try_stream` | publisher | the round trip: `range(0..n).to_stream(8)` published again on the pool |
//! | `compat::sink_subscriber(drain)` | subscriber whitebox, blackbox | `futures::sink::drain()`; the puppet's `signal_cancel` is the completion's `cancel` |
//! | `compat::from_async(Prefetch 4)` | subscriber whitebox, blackbox | an `AsyncSubscriber` that accepts everything; cancel as above |

use std::ops::ControlFlow;
use std::sync::OnceLock;

use futures::executor::ThreadPool;
use rs_api::{BoxSubscriber, Error};
use rs_impl::compat::{
    from_async, from_stream, from_try_stream, sink_subscriber, AsyncSubscriber, Completion,
    PublisherCompat,
};
use rs_impl::source;

use crate::publisher::{self, PublisherFactory};
use crate::subscriber::{
    blackbox, whitebox, ProbeReporting, SubscriberBlackboxVerification, SubscriberPuppet,
    SubscriberWhiteboxVerification, WhiteboxSubscriberProbe,
};
use crate::suite::Suite;

/// The executor of every compat entry: one futures thread pool for the whole run.
fn pool() -> ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        ThreadPool::builder()
            .pool_size(2)
            .name_prefix("rs-tck-compat-")
            .create()
            .expect("a futures thread pool")
    })
    .clone()
}

fn failed_error() -> Error {
    Error::msg("rs-tck: the failed publisher")
}

/// The compat suites.
pub(super) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify(
            "compat::from_stream",
            PublisherFactory::new(|n| Box::new(from_stream(futures::stream::iter(0..n), pool())))
                .with_failed(|| {
                    let one = futures::stream::iter([Err::<u64, Error>(failed_error())]);
                    Box::new(from_try_stream(one, pool()))
                }),
        ),
        publisher::verify(
            "source::push(0)",
            PublisherFactory::new(|n| {
                let (publisher, producer) = source::push::<u64>(0);
                std::thread::spawn(move || {
                    for i in 0..n {
                        if producer.offer_blocking(i).is_err() {
                            return; // cancelled (or never subscribed and dropped)
                        }
                    }
                    producer.complete();
                });
                Box::new(publisher)
            })
            .with_failed(|| {
                let (publisher, producer) = source::push::<u64>(0);
                producer.fail(failed_error());
                Box::new(publisher)
            }),
        ),
        publisher::verify(
            "compat::to_stream → from_try_stream",
            PublisherFactory::new(|n| {
                let stream = source::range(0..n).to_stream(8);
                Box::new(from_try_stream(stream, pool()))
            })
            .with_failed(|| {
                let stream = source::failed::<u64>(failed_error()).to_stream(8);
                Box::new(from_try_stream(stream, pool()))
            }),
        ),
        whitebox::verify("compat::sink_subscriber(drain)", Adapter::Sink),
        blackbox::verify("compat::sink_subscriber(drain)", Adapter::Sink),
        whitebox::verify("compat::from_async(Prefetch 4)", Adapter::Async),
        blackbox::verify("compat::from_async(Prefetch 4)", Adapter::Async),
    ]
}

/// Which task-driven adapter.
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
                let (s, done) = sink_subscriber(futures::sink::drain(), &pool());
                (Box::new(s), done)
            }
            Adapter::Async => {
                let (s, done) = from_async(Accept, 4, &pool());
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
    type Subscriber = BoxSubscriber<u64>;

    fn create_subscriber(&self) -> BoxSubscriber<u64> {
        self.make().0
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

impl SubscriberWhiteboxVerification for Adapter {
    type Item = u64;

    fn create_subscriber(&self, probe: WhiteboxSubscriberProbe<u64>) -> BoxSubscriber<u64> {
        let (s, done) = self.make();
        Box::new(ProbeReporting::new(s, probe, Cancel(done)))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}
