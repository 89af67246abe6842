//! `rs_impl::boundary`: flows with batching async boundaries as publishers (the boundary's
//! publisher side: the TCK's subscriber sits behind one or two boundaries), an
//! `IslandProcessor` with a boundary inside, and the boundary subscriber on its own. All run on
//! the islands' shared two-thread runtime (futures' thread pool). Not in the loom mode:
//! islands need an executor; rs-impl's loom models (`rs-impl/tests/loom/boundary.rs`) cover
//! the boundary's concurrency.
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `boundary::Flow::from_iter(..).map.async_boundary()` | publisher (cold: the 1.11 tests run) | the output side fused with the source; the subscriber served from the ring |
//! | `boundary::Flow::from_publisher(range).async_boundary().filter.async_boundary(16)` | publisher (cold: the 1.11 tests run) | a foreign publisher into the first island, two boundaries (the second with a ring of 16) |
//! | `boundary::Flow::from_iter(..).async_boundary(batching off)` | publisher (cold: the 1.11 tests run) | every element its own flush |
//! | `boundary::IslandProcessor(async_boundary)` | identity processor | unicast (`max_supported_subscribers = 1`) |
//! | `boundary::BoundarySubscriber(16)` | subscriber whitebox, blackbox | its island (`Flow::from_boundary`) drains into an unbounded `collect`; the puppet's `signal_cancel` cancels that downstream, which cancels upstream |

use rs_api::{Error, Processor, Publisher};
use rs_impl::boundary::{BoundaryConfig, BoundarySubscriber};
use rs_impl::flow::{Flow, FlowPublisher, IslandProcessor};
use rs_impl::source;
use rs_impl::subscriber::{collect, Handle, RequestStrategy};
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::publisher;
use rs_tck::subscriber::{blackbox, whitebox};
use rs_tck::suite::Suite;

use super::islands::{runtime, ColdFlow, Drained};

/// The boundary suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify(
            "boundary::Flow::from_iter(..).map.async_boundary()",
            ColdFlow {
                make: one_boundary,
                fail: failed,
            },
        ),
        publisher::verify(
            "boundary::Flow::from_publisher(range).async_boundary().filter.async_boundary(16)",
            ColdFlow {
                make: two_boundaries,
                fail: failed,
            },
        ),
        publisher::verify(
            "boundary::Flow::from_iter(..).async_boundary(batching off)",
            ColdFlow {
                make: unbatched,
                fail: failed,
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

/// `Flow::from_publisher(range(0..n))`, a boundary, a filter, a boundary of 16.
fn two_boundaries(elements: u64) -> FlowPublisher<u64> {
    Flow::from_publisher(source::range(0..elements))
        .async_boundary()
        .filter(|_| true)
        .async_boundary_with(BoundaryConfig::new().size(16))
        .into_publisher(runtime())
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
