//! The registry's island entries (`rs_impl::island`): the builder's output publisher, the
//! input side as a subscriber, and an identity flow as a processor. All run on one shared
//! two-thread runtime (futures' thread pool).
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `island::Flow::from_iter(..).map` | publisher | elements produced inside the island |
//! | `island::Flow::from_publisher(range).filter.map` | publisher | a foreign publisher through the input buffer (16) |
//! | `island::IslandProcessor(identity)` | identity processor | unicast: `max_supported_subscribers() = 1` |
//! | `island::IslandProcessor(identity) input side` | subscriber whitebox, blackbox | the processor's subscriber half, its island draining into an unbounded `collect`; the puppet's `signal_cancel` cancels that downstream, which cancels upstream |

use std::sync::OnceLock;

use rs_api::{BoxSubscriber, Error};
use rs_impl::island::{Flow, IslandProcessor, Runtime};
use rs_impl::source;
use rs_impl::subscriber::{collect, Handle, RequestStrategy};

use crate::processor::{self, IdentityProcessorVerification, ProcessorHalves};
use crate::publisher::{self, BoxPublisher, PublisherFactory};
use crate::subscriber::{
    blackbox, whitebox, ProbeReporting, SubscriberBlackboxVerification, SubscriberPuppet,
    SubscriberWhiteboxVerification, WhiteboxSubscriberProbe,
};
use crate::suite::Suite;

/// The runtime every island entry runs on (made once per process).
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::with_threads(2).expect("the island thread pool starts"))
}

fn failed() -> BoxPublisher<u64> {
    Box::new(
        Flow::from_publisher(source::failed::<u64>(Error::msg(
            "rs-tck: the failed publisher",
        )))
        .map(|x| x)
        .into_publisher(runtime()),
    )
}

/// An identity flow as a processor.
#[derive(Debug, Clone, Copy)]
struct IslandIdentity;

impl IdentityProcessorVerification for IslandIdentity {
    type Item = u64;

    fn create_identity_processor(&self, buffer_size: usize) -> ProcessorHalves<u64> {
        ProcessorHalves::of(IslandProcessor::new(
            |f| f.identity(),
            buffer_size,
            runtime(),
        ))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<BoxPublisher<u64>> {
        Some(failed())
    }

    fn max_supported_subscribers(&self) -> u64 {
        1
    }
}

/// The input side: an identity processor whose island drains into an unbounded `collect`.
#[derive(Debug, Clone, Copy)]
struct InputSide;

/// Cancels the downstream collector, which makes the island cancel its upstream.
struct Downstream(Handle<Vec<u64>>);

impl SubscriberPuppet for Downstream {
    /// The input side requests by itself (prefetch 16, then 8 per 8 taken), and the unbounded
    /// downstream keeps it taking: its demand reaches any `n` eventually.
    fn trigger_request(&self, _elements: u64) {}

    fn signal_cancel(&self) {
        self.0.cancel();
    }
}

impl InputSide {
    fn make(&self) -> (BoxSubscriber<u64>, Downstream) {
        let p = IslandProcessor::new(|f: Flow<u64>| f, 16, runtime());
        let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
        rs_api::Publisher::subscribe(&p, Box::new(s));
        (Box::new(p), Downstream(h))
    }
}

impl SubscriberBlackboxVerification for InputSide {
    type Item = u64;
    type Subscriber = BoxSubscriber<u64>;

    fn create_subscriber(&self) -> BoxSubscriber<u64> {
        self.make().0
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

impl SubscriberWhiteboxVerification for InputSide {
    type Item = u64;

    fn create_subscriber(&self, probe: WhiteboxSubscriberProbe<u64>) -> BoxSubscriber<u64> {
        let (s, puppet) = self.make();
        Box::new(ProbeReporting::new(s, probe, puppet))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

/// The island suites.
pub(super) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify(
            "island::Flow::from_iter(..).map",
            PublisherFactory::new(|n| {
                Box::new(Flow::from_iter(0..n).map(|x| x).into_publisher(runtime()))
            })
            .with_failed(failed),
        ),
        publisher::verify(
            "island::Flow::from_publisher(range).filter.map",
            PublisherFactory::new(|n| {
                Box::new(
                    Flow::from_publisher(source::range(0..n))
                        .filter(|_| true)
                        .map(|x| x)
                        .into_publisher(runtime()),
                )
            })
            .with_failed(failed),
        ),
        processor::verify("island::IslandProcessor(identity)", IslandIdentity),
        whitebox::verify("island::IslandProcessor(identity) input side", InputSide),
        blackbox::verify("island::IslandProcessor(identity) input side", InputSide),
    ]
}
