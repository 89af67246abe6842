//! `rs_impl::island`: the builder's output publishers, an identity flow as a processor, and
//! that processor's subscriber half (the island's input side) as a subscriber. All run on one
//! shared two-thread runtime (futures' thread pool). Not in the loom mode: an island needs an
//! executor; rs-impl's loom models (`rs-impl/tests/loom/island.rs`) cover its concurrency.
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `island::Flow::from_iter(..).map` | publisher (cold: the 1.11 tests run) | elements produced inside the island, a fresh island per subscriber; not built on an upstream (bounded buffering skipped, saying so) |
//! | `island::Flow::from_publisher(range).filter.map` | publisher (cold: the 1.11 tests run) | a foreign publisher through the input buffer, a fresh island and range subscription per subscriber; bounded buffering over a tapped range, declared bound [`DEFAULT_INPUT_BUFFER`] (16: the input buffer; the island itself holds nothing between its fused stages) |
//! | `island::IslandProcessor(identity)` | identity processor | unicast: `max_supported_subscribers() = 1` |
//! | `island::IslandProcessor(identity) input side` | subscriber whitebox, blackbox | the processor's subscriber half, its island draining into an unbounded `collect`; the puppet's `signal_cancel` cancels that downstream, which cancels upstream |

use std::sync::OnceLock;

use rs_api::{Error, Processor, Publisher, Subscriber};
use rs_impl::flow::{Flow, FlowPublisher, FromBoundary, IslandProcessor, DEFAULT_INPUT_BUFFER};
use rs_impl::island::Runtime;
use rs_impl::source;
use rs_impl::subscriber::{collect, Handle, RequestStrategy};
use rs_tck::instruments::UpstreamTap;
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::publisher::{self, BufferBound, PublisherVerification, SupportedSubscribers};
use rs_tck::subscriber::{
    blackbox, whitebox, ProbeReporting, SubscriberBlackboxVerification, SubscriberPuppet,
    SubscriberWhiteboxVerification, WhiteboxSubscriberProbe,
};
use rs_tck::suite::Suite;

/// The island suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify(
            "island::Flow::from_iter(..).map",
            ColdFlow {
                make: from_iter,
                fail: failed,
                on_upstream: None,
            },
        ),
        publisher::verify(
            "island::Flow::from_publisher(range).filter.map",
            ColdFlow {
                make: from_publisher,
                fail: failed,
                on_upstream: Some(OnUpstream {
                    make: from_publisher_on,
                    bound: DEFAULT_INPUT_BUFFER as u64,
                }),
            },
        ),
        processor::verify("island::IslandProcessor(identity)", IslandIdentity),
        whitebox::verify(
            "island::IslandProcessor(identity) input side",
            Drained(input_side),
        ),
        blackbox::verify(
            "island::IslandProcessor(identity) input side",
            Drained(input_side),
        ),
    ]
}

/// The runtime every island entry runs on (made once per process; the boundary entries share
/// it).
pub(super) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::with_threads(2).expect("the island thread pool starts"))
}

/// The failed publisher of every island entry: an island whose upstream fails.
fn failed() -> FlowPublisher<u64> {
    Flow::from_publisher(source::failed::<u64>(Error::msg(
        "rs-tck: the failed publisher",
    )))
    .map(|x| x)
    .into_publisher(runtime())
}

/// A cold flow publisher as a publisher verification: `make(n)` builds the flow of `n`
/// elements, `fail()` one that fails. Every subscription materialises its own islands, so the
/// publisher declares multiple subscribers (the 1.11 tests are required). A flow that reads a
/// foreign publisher says how to build it on the TCK's tapped upstream, and what it may hold,
/// for the bounded-buffering check (`on_upstream`; `None` for a flow whose elements are made
/// inside it). The island and boundary entries share it.
#[derive(Clone, Copy)]
pub(super) struct ColdFlow {
    pub(super) make: fn(u64) -> FlowPublisher<u64>,
    pub(super) fail: fn() -> FlowPublisher<u64>,
    pub(super) on_upstream: Option<OnUpstream>,
}

/// A flow built on a foreign publisher, for the bounded-buffering check.
#[derive(Clone, Copy)]
pub(super) struct OnUpstream {
    /// The flow of `make(n)` (the same function builds both), with its `range(0..n)` passed
    /// through the tap.
    pub(super) make: fn(u64, &UpstreamTap) -> FlowPublisher<u64>,
    /// What the flow's documented buffers hold at most: the input buffer of
    /// `Flow::from_publisher` plus the ring of every async boundary (each side of one asks for
    /// no more than the buffer or ring behind it has room for).
    pub(super) bound: u64,
}

impl PublisherVerification for ColdFlow {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        (self.make)(elements)
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some((self.fail)())
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }

    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<u64> + Send + 'static> {
        self.on_upstream.map(|o| (o.make)(elements, tap))
    }

    fn max_buffered_from_upstream(&self) -> BufferBound {
        self.on_upstream
            .map_or(BufferBound::Undeclared, |o| BufferBound::AtMost(o.bound))
    }
}

/// `Flow::from_iter(0..n).map(identity)`: elements made inside the island.
fn from_iter(elements: u64) -> FlowPublisher<u64> {
    Flow::from_iter(0..elements)
        .map(|x| x)
        .into_publisher(runtime())
}

/// `Flow::from_publisher(range(0..n)).filter(..).map(..)`: through the input side.
fn from_publisher(elements: u64) -> FlowPublisher<u64> {
    from_publisher_over(source::range(0..elements))
}

/// [`from_publisher`] with its range on the TCK's tap.
fn from_publisher_on(elements: u64, tap: &UpstreamTap) -> FlowPublisher<u64> {
    from_publisher_over(tap.publisher(source::range(0..elements)))
}

/// `Flow::from_publisher(upstream).filter(..).map(..)`.
fn from_publisher_over(
    upstream: impl Publisher<u64> + Send + Sync + 'static,
) -> FlowPublisher<u64> {
    Flow::from_publisher(upstream)
        .filter(|_| true)
        .map(|x| x)
        .into_publisher(runtime())
}

/// An identity flow as a processor.
#[derive(Debug, Clone, Copy)]
struct IslandIdentity;

impl IdentityProcessorVerification for IslandIdentity {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        IslandProcessor::new(|f| f.identity(), buffer_size, runtime())
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(failed())
    }

    fn max_supported_subscribers(&self) -> u64 {
        1
    }
}

/// The input side: an identity processor whose island drains into an unbounded `collect`.
fn input_side() -> (IslandProcessor<u64, u64>, Handle<Vec<u64>>) {
    let p = IslandProcessor::new(|f: Flow<FromBoundary<u64>>| f, 16, runtime());
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    (p, h)
}

/// A subscriber that feeds an island draining into an unbounded `collect` (an island's input
/// side), made by the function inside; the puppet cancels that downstream, which makes the
/// island cancel its upstream. Shared with the boundary's registry.
pub(super) struct Drained<S>(pub(super) fn() -> (S, Handle<Vec<u64>>));

impl<S> Clone for Drained<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Drained<S> {}

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

impl<S: Subscriber<u64> + 'static> SubscriberBlackboxVerification for Drained<S> {
    type Item = u64;

    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        // Blackbox: nobody waits for the collector (dropping its handle would cancel it).
        let (s, downstream) = (self.0)();
        downstream.detach();
        s
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

impl<S: Subscriber<u64> + 'static> SubscriberWhiteboxVerification for Drained<S> {
    type Item = u64;

    fn create_subscriber(
        &self,
        probe: WhiteboxSubscriberProbe<u64>,
    ) -> impl Subscriber<u64> + 'static {
        let (s, h) = (self.0)();
        ProbeReporting::new(s, probe, Downstream(h))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}
