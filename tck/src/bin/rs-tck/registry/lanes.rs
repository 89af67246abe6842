//! `rs_impl::lanes`: keyed lanes on a flow, identity lanes merged back (not in a loom build:
//! every lane is an island, which needs an executor). A publisher of lanes is cold (a fresh
//! run of every lane per subscriber) but merges its lanes as their elements arrive, so it
//! declares no multicast (as a merge does: two subscribers may see different, equally correct
//! interleavings across keys).
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `Flow::lanes(4, identity)` | publisher | `0..n` keyed by the element over 4 lanes of 4, merged back |
//! | `Flow::lanes(4, identity; one key)` | identity processor | `IslandProcessor` of 4 identity lanes, every element one key: an identity processor must keep the sequence (rule 3.10's check asks for it), and lanes keep it per key only |

use std::sync::OnceLock;

use rs_api::{BoxPublisher, Error, Processor, Publisher};
use rs_impl::flow::{Flow, IslandProcessor};
use rs_impl::island::Runtime;
use rs_impl::lanes::LanesConfig;
use rs_impl::source;
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::publisher::{self, BufferBound, PublisherVerification, SupportedSubscribers};
use rs_tck::suite::Suite;

/// The lane count of the registered entries.
const LANES: usize = 4;
/// Each lane's ring, and each ring into the merging island.
const RING: usize = 4;

/// The lanes suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify("Flow::lanes(4, identity)", Lanes),
        processor::verify("Flow::lanes(4, identity; one key)", LanesIdentity),
    ]
}

/// The runtime of the lanes entries (made once per process).
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::with_threads(2).expect("the lanes thread pool starts"))
}

fn config() -> LanesConfig<u64> {
    LanesConfig::new(LANES).capacity(RING).output(RING)
}

/// `0..n` over identity lanes, merged back.
#[derive(Debug, Clone, Copy)]
struct Lanes;

impl PublisherVerification for Lanes {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        let p: BoxPublisher<u64> = Box::new(
            Flow::from_iter(0..elements)
                .lanes_with(config(), |x: &u64| *x, |lane| lane)
                .into_publisher(runtime()),
        );
        p
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(
            Flow::from_publisher(source::failed::<u64>(Error::msg(
                "rs-tck: the failed publisher",
            )))
            .lanes_with(config(), |x: &u64| *x, |lane| lane)
            .into_publisher(runtime()),
        )
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::Undeclared
    }
}

/// Identity lanes as an identity processor, every element of one key (so the processor keeps
/// the sequence, as an identity processor must; the other three lanes stay idle but are
/// materialised, attached and completed like the busy one).
#[derive(Debug, Clone, Copy)]
struct LanesIdentity;

impl IdentityProcessorVerification for LanesIdentity {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        IslandProcessor::new(
            |f| f.lanes_with(config(), |_: &u64| 0u8, |lane| lane),
            buffer_size,
            runtime(),
        )
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    /// The island's input buffer (`buffer_size`), the element the dispatcher holds for a
    /// full lane, and per lane its ring and its ring into the merging island.
    fn max_buffered_elements(&self, buffer_size: usize) -> BufferBound {
        BufferBound::AtMost(buffer_size as u64 + 1 + (LANES * 2 * RING) as u64)
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(
            Flow::from_publisher(source::failed::<u64>(Error::msg(
                "rs-tck: the failed publisher",
            )))
            .lanes_with(config(), |x: &u64| *x, |lane| lane)
            .into_publisher(runtime()),
        )
    }

    fn max_supported_subscribers(&self) -> u64 {
        1
    }
}
