//! `rs_impl::merge`: merge, flat_map, concat_map and observe_on, on plain publishers and as
//! flow operators. Every publisher here is cold (a fresh run of the outer and the inners per
//! subscriber), so each declares multiple subscribers. The plain-publisher merges are built on
//! the loom facade and run the loom mode too; the island entries (flows, `observe_on`) do not
//! (an island needs an executor).
//!
//! | implementation | verifications | notes |
//! |---|---|---|
//! | `merge::merge(ranges)` | publisher, loom | `n` split over three inners: a range subscribed to, a range taken as a known iterator, a value |
//! | `merge::flat_map(range of ranges)` | publisher, loom | `range(0..⌈n/10⌉).flat_map(range of 10)`: known iterators, no subscription |
//! | `merge::flat_map(range of subscribed ranges)` | publisher, loom | the same with every inner a boxed publisher: subscribed, queued on contention |
//! | `merge::concat_map(range of subscribed ranges)` | publisher, loom | one inner at a time |
//! | `merge::observe_on(range)` | publisher | a range delivered on an island of the shared runtime, prefetch 16 |
//! | `Flow::flat_map(range of subscribed ranges)` | publisher | the island's fan-in stage |
//! | `Flow::observe_on` | publisher | a flow whose second island runs on another runtime |
//! | `Flow::flat_map(identity)` | identity processor | `IslandProcessor` of `flat_map(Some)`: each element a known value |

#[cfg(not(rs_loom))]
use std::sync::OnceLock;

#[cfg(not(rs_loom))]
use rs_api::Processor;
use rs_api::{BoxPublisher, Error, Publisher};
#[cfg(not(rs_loom))]
use rs_impl::flow::{Flow, FlowPublisher, IslandProcessor};
#[cfg(not(rs_loom))]
use rs_impl::island::Runtime;
#[cfg(not(rs_loom))]
use rs_impl::merge::MergeExt;
use rs_impl::merge::{self, InnerSource};
use rs_impl::source;
use rs_tck::loom;
#[cfg(not(rs_loom))]
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::publisher::{self, PublisherVerification, SupportedSubscribers};
use rs_tck::suite::Suite;

/// The merge suites.
pub(crate) fn suites() -> Vec<Suite> {
    let plain = plain()
        .into_iter()
        .map(|(name, v)| publisher::verify(name, v));
    #[cfg(not(rs_loom))]
    let plain = plain.chain(islands());
    plain.collect()
}

/// The loom suites of the plain-publisher merges.
pub(crate) fn loom_suites() -> Vec<Suite> {
    plain()
        .into_iter()
        .map(|(name, v)| loom::verify_publisher(name, v))
        .collect()
}

/// The plain-publisher merges.
fn plain() -> Vec<(&'static str, Merged)> {
    vec![
        ("merge::merge(ranges)", Merged(merged, false)),
        (
            "merge::flat_map(range of ranges)",
            Merged(flat_map_iterators, false),
        ),
        (
            "merge::flat_map(range of subscribed ranges)",
            Merged(flat_map_subscribed, false),
        ),
        (
            "merge::concat_map(range of subscribed ranges)",
            Merged(concat_map_subscribed, true),
        ),
    ]
}

/// The island entries.
#[cfg(not(rs_loom))]
fn islands() -> Vec<Suite> {
    vec![
        publisher::verify("merge::observe_on(range)", Merged(observe_on, true)),
        publisher::verify(
            "Flow::flat_map(range of subscribed ranges)",
            Merged(flow_flat_map, false),
        ),
        publisher::verify("Flow::observe_on", Merged(flow_observe_on, true)),
        processor::verify("Flow::flat_map(identity)", FlatMapIdentity),
    ]
}

/// A merge as a publisher verification: `make(n)` publishes `n` elements; the failed
/// publisher is a merge whose one inner fails.
///
/// Every subscription is a run of its own, but a merge interleaves its inners as their
/// elements and the subscriber's demand arrive: two subscribers with different request
/// patterns may see different (equally correct) orders. So a merge declares no multicast
/// (the 1.11 "same sequence to every subscriber" tests are optional for it, as in the JVM
/// TCK), except where the order is part of the contract: `concat_map`, `observe_on`, a flow
/// of one inner at a time.
#[derive(Clone, Copy)]
struct Merged(fn(u64) -> BoxPublisher<u64>, bool);

impl PublisherVerification for Merged {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        (self.0)(elements)
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(merge::merge(vec![Part::Iter(0, 3), Part::Fail]))
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        if self.1 {
            SupportedSubscribers::MANY
        } else {
            SupportedSubscribers::Undeclared
        }
    }
}

/// The `k`-th of the 10-element inners of `0..n`.
fn chunk(k: u64, n: u64) -> std::ops::Range<u64> {
    k * 10..((k + 1) * 10).min(n)
}

/// One inner of [`merged`]: a range subscribed to, a known iterator, a value, nothing, or a
/// failure.
#[derive(Clone, Debug)]
enum Part {
    Subscribed(u64, u64),
    Iter(u64, u64),
    Just(u64),
    Nothing,
    Fail,
}

impl merge::Inner<u64> for Part {
    fn into_source(self) -> InnerSource<u64> {
        match self {
            Part::Subscribed(a, b) => InnerSource::Publisher(Box::new(source::range(a..b))),
            Part::Iter(a, b) => InnerSource::Iter(Box::new(a..b)),
            Part::Just(x) => InnerSource::Just(x),
            Part::Nothing => InnerSource::Empty,
            Part::Fail => InnerSource::Publisher(Box::new(source::failed::<u64>(Error::msg(
                "rs-tck: the failed publisher",
            )))),
        }
    }
}

/// `n` split over a subscribed range, a known iterator and a value.
fn merged(n: u64) -> BoxPublisher<u64> {
    let a = n / 2;
    let b = n.saturating_sub(1).max(a);
    let last = if n > 0 {
        Part::Just(n - 1)
    } else {
        Part::Nothing
    };
    Box::new(merge::merge(vec![
        Part::Subscribed(0, a),
        Part::Iter(a, b),
        last,
    ]))
}

/// `range(0..⌈n/10⌉)` flat-mapped to the 10-element ranges: known iterators.
fn flat_map_iterators(n: u64) -> BoxPublisher<u64> {
    Box::new(source::range(0..n.div_ceil(10)).flat_map(move |k| source::range(chunk(k, n)), 4, 16))
}

/// The same with every inner a boxed publisher (subscribed to).
fn flat_map_subscribed(n: u64) -> BoxPublisher<u64> {
    Box::new(source::range(0..n.div_ceil(10)).flat_map(
        move |k| -> BoxPublisher<u64> { Box::new(source::range(chunk(k, n))) },
        4,
        4,
    ))
}

/// One subscribed inner at a time.
fn concat_map_subscribed(n: u64) -> BoxPublisher<u64> {
    Box::new(source::range(0..n.div_ceil(10)).concat_map(
        move |k| -> BoxPublisher<u64> { Box::new(source::range(chunk(k, n))) },
        4,
    ))
}

/// The runtime of the island entries (made once per process).
#[cfg(not(rs_loom))]
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::with_threads(2).expect("the merge thread pool starts"))
}

/// A second runtime, for `Flow::observe_on`.
#[cfg(not(rs_loom))]
fn other_runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::with_threads(1).expect("the observe_on thread pool starts"))
}

#[cfg(not(rs_loom))]
fn observe_on(n: u64) -> BoxPublisher<u64> {
    Box::new(source::range(0..n).observe_on(runtime(), 16))
}

#[cfg(not(rs_loom))]
fn flow_flat_map(n: u64) -> BoxPublisher<u64> {
    Box::new(
        Flow::from_iter(0..n.div_ceil(10))
            .flat_map(
                move |k| -> BoxPublisher<u64> { Box::new(source::range(chunk(k, n))) },
                4,
                8,
            )
            .into_publisher(runtime()),
    )
}

#[cfg(not(rs_loom))]
fn flow_observe_on(n: u64) -> BoxPublisher<u64> {
    let p: FlowPublisher<u64> = Flow::from_iter(0..n)
        .observe_on(other_runtime(), 16)
        .map(|x| x)
        .into_publisher(runtime());
    Box::new(p)
}

/// `flat_map(Some)` as an identity processor.
#[cfg(not(rs_loom))]
#[derive(Debug, Clone, Copy)]
struct FlatMapIdentity;

#[cfg(not(rs_loom))]
impl IdentityProcessorVerification for FlatMapIdentity {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        IslandProcessor::new(|f| f.flat_map(Some, 16, 16), buffer_size, runtime())
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    /// The island's input buffer (`buffer_size`) plus what the stage holds: at most
    /// `max_concurrency` (16) inners, each here one value.
    fn max_buffered_elements(&self, buffer_size: usize) -> rs_tck::publisher::BufferBound {
        rs_tck::publisher::BufferBound::AtMost(buffer_size as u64 + 16)
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(
            Flow::from_publisher(source::failed::<u64>(Error::msg(
                "rs-tck: the failed publisher",
            )))
            .flat_map(Some, 4, 4)
            .into_publisher(runtime()),
        )
    }

    fn max_supported_subscribers(&self) -> u64 {
        1
    }
}
