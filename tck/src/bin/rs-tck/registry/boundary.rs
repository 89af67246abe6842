//! `rs_impl::boundary`: flows with batching async boundaries as publishers (the boundary's
//! publisher side: the TCK's subscriber sits behind one or two boundaries), an
//! `IslandProcessor` with a boundary inside, and the boundary subscriber on its own. All run on
//! the islands' shared two-thread runtime (futures' thread pool). Not in the loom mode:
//! islands need an executor; rs-impl's loom models (`rs-impl/tests/loom/boundary.rs`) cover
//! the boundary's concurrency.
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `boundary::Flow::from_iter(..).map.async_boundary()` | publisher (cold: the 1.11 tests run) | the output side fused with the source; the subscriber served from the ring; not built on an upstream (bounded buffering skipped, saying so), as the next one |
//! | `boundary::Flow::from_publisher(range).async_boundary().filter.async_boundary(16)` | publisher (cold: the 1.11 tests run) | a foreign publisher into the first island, two boundaries (the second with a ring of 16); bounded buffering over a tapped range, declared bound 1056: the input buffer ([`DEFAULT_INPUT_BUFFER`], 16), the first ring ([`DEFAULT_BOUNDARY_SIZE`](rs_impl::boundary::DEFAULT_BOUNDARY_SIZE), 1024) and the second (16); with no downstream demand it holds 1040 (the second ring's 16 took positions of the first ring's grant) |
//! | `boundary::Flow::from_iter(..).async_boundary(batching off)` | publisher (cold: the 1.11 tests run) | every element its own flush |
//! | `boundary::IslandProcessor(async_boundary)` | identity processor | unicast (`max_supported_subscribers = 1`) |
//! | `boundary::BoundarySubscriber(16)` | subscriber whitebox, blackbox | its island (`Flow::from_boundary`) drains into an unbounded `collect`; the puppet's `signal_cancel` cancels that downstream, which cancels upstream |

use rs_api::{Error, Processor, Publisher};
use rs_impl::boundary::{BoundaryConfig, BoundarySubscriber};
use rs_impl::flow::{Flow, FlowPublisher, IslandProcessor, DEFAULT_INPUT_BUFFER};
use rs_impl::source;
use rs_impl::subscriber::{collect, Handle, RequestStrategy};
use rs_tck::instruments::UpstreamTap;
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::publisher;
use rs_tck::subscriber::{blackbox, whitebox};
use rs_tck::suite::Suite;

use super::islands::{runtime, ColdFlow, Drained, OnUpstream};

/// The boundary suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify(
            "boundary::Flow::from_iter(..).map.async_boundary()",
            ColdFlow {
                make: one_boundary,
                fail: failed,
                on_upstream: None,
            },
        ),
        publisher::verify(
            "boundary::Flow::from_publisher(range).async_boundary().filter.async_boundary(16)",
            ColdFlow {
                make: two_boundaries,
                fail: failed,
                on_upstream: Some(OnUpstream {
                    make: two_boundaries_on,
                    bound: two_boundaries_bound(),
                }),
            },
        ),
        publisher::verify(
            "boundary::Flow::from_iter(..).async_boundary(batching off)",
            ColdFlow {
                make: unbatched,
                fail: failed,
                on_upstream: None,
            },
        ),
        processor::verify("boundary::IslandProcessor(async_boundary)", Processed),
        whitebox::verify("boundary::BoundarySubscriber(16)", Drained(boundary_input)),
        blackbox::verify("boundary::BoundarySubscriber(16)", Drained(boundary_input)),
    ]
}

/// The failed publisher of every boundary entry: the upstream island fails, across the
/// boundary.
fn failed() -> FlowPublisher<u64> {
    Flow::from_publisher(source::failed::<u64>(Error::msg(
        "rs-tck: the failed publisher",
    )))
    .async_boundary()
    .map(|x| x)
    .into_publisher(runtime())
}

/// `Flow::from_iter(0..n).map(identity).async_boundary()`.
fn one_boundary(elements: u64) -> FlowPublisher<u64> {
    Flow::from_iter(0..elements)
        .map(|x| x)
        .async_boundary()
        .into_publisher(runtime())
}

/// The ring of the second boundary of [`two_boundaries`].
const SECOND_RING: usize = 16;

/// `Flow::from_publisher(range(0..n))`, a boundary, a filter, a boundary of 16.
fn two_boundaries(elements: u64) -> FlowPublisher<u64> {
    two_boundaries_over(source::range(0..elements))
}

/// [`two_boundaries`] with its range on the TCK's tap.
fn two_boundaries_on(elements: u64, tap: &UpstreamTap) -> FlowPublisher<u64> {
    two_boundaries_over(tap.publisher(source::range(0..elements)))
}

/// `Flow::from_publisher(upstream)`, a boundary, a filter, a boundary of [`SECOND_RING`].
fn two_boundaries_over(
    upstream: impl Publisher<u64> + Send + Sync + 'static,
) -> FlowPublisher<u64> {
    Flow::from_publisher(upstream)
        .async_boundary()
        .filter(|_| true)
        .async_boundary_with(BoundaryConfig::new().size(SECOND_RING))
        .into_publisher(runtime())
}

/// What [`two_boundaries`] may have taken from its upstream and not delivered: the input
/// buffer, then each boundary's ring (its input side grants the upstream island no more than
/// the ring's room, and the island asks its own input buffer for no more than that).
fn two_boundaries_bound() -> u64 {
    (DEFAULT_INPUT_BUFFER
        + BoundaryConfig::new().ring_size()
        + BoundaryConfig::new().size(SECOND_RING).ring_size()) as u64
}

/// One boundary with batching off.
fn unbatched(elements: u64) -> FlowPublisher<u64> {
    Flow::from_iter(0..elements)
        .async_boundary_with(BoundaryConfig::new().batching(false))
        .into_publisher(runtime())
}

/// An identity processor whose flow crosses a boundary inside.
#[derive(Debug, Clone, Copy)]
struct Processed;

impl IdentityProcessorVerification for Processed {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        IslandProcessor::new(
            |f| f.async_boundary_with(BoundaryConfig::new().size(buffer_size)),
            buffer_size,
            runtime(),
        )
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

    /// Two buffers of `buffer_size` by construction: the processor's input side (prefetched)
    /// and the boundary's ring inside its flow.
    fn max_buffered_elements(&self, buffer_size: usize) -> rs_tck::publisher::BufferBound {
        rs_tck::publisher::BufferBound::AtMost(2 * buffer_size as u64)
    }
}

/// The boundary subscriber on its own: its island (`Flow::from_boundary`) drains into an
/// unbounded `collect`.
fn boundary_input() -> (BoundarySubscriber<u64>, Handle<Vec<u64>>) {
    let (s, input) = BoundarySubscriber::new(16);
    let (c, h) = collect::<u64>(RequestStrategy::Unbounded);
    Flow::from_boundary(input)
        .into_publisher(runtime())
        .subscribe(Box::new(c));
    (s, h)
}
