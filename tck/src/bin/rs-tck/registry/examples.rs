//! The publishers of `rs-impl/examples/`, written as users write theirs (included from there:
//! the examples are the code that is verified), in the publisher verification and in the loom
//! mode.
//!
//! | implementation | example | signals from |
//! |---|---|---|
//! | `examples::repeat` | `repeat.rs`: the `serial` module's example, on `DrainLoop` | the caller's thread (`subscribe`, `request`, `cancel`) |
//! | `examples::thread_publisher` | `thread_publisher.rs`: a thread per subscription, emitting as demand arrives | a thread of its own |
//!
//! Both are cold (every subscriber gets its own run), so both declare multiple subscribers:
//! the 1.11 tests are required of them.

use rs_api::{Error, Publisher};
use rs_tck::loom;
use rs_tck::publisher::{self, PublisherVerification, SupportedSubscribers};
use rs_tck::suite::Suite;

#[allow(dead_code)] // the example's `main` and its demo subscriber
#[path = "../../../../../rs-impl/examples/repeat.rs"]
mod repeat;

#[allow(dead_code)] // the example's `main`
#[path = "../../../../../rs-impl/examples/thread_publisher.rs"]
mod thread_publisher;

/// The publisher suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify("examples::repeat", Repeat),
        publisher::verify("examples::thread_publisher", ThreadPublisher),
    ]
}

/// The loom suites, over the same verifications.
pub(crate) fn loom_suites() -> Vec<Suite> {
    vec![
        loom::verify_publisher("examples::repeat", Repeat),
        loom::verify_publisher("examples::thread_publisher", ThreadPublisher),
    ]
}

/// `Repeat { value: 7, count: n }`.
#[derive(Debug, Clone, Copy)]
struct Repeat;

impl PublisherVerification for Repeat {
    type Item = u32;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u32> + Send + 'static {
        repeat::Repeat {
            value: 7,
            count: elements,
        }
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u32> + Send + 'static> {
        Some(rs_impl::source::failed::<u32>(Error::msg(
            "failed on purpose",
        )))
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }
}

/// `ThreadPublisher` over `0..n`; its failed publisher is one whose source fails at the first
/// read.
#[derive(Debug, Clone, Copy)]
struct ThreadPublisher;

impl PublisherVerification for ThreadPublisher {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        thread_publisher::ThreadPublisher::new(move || (0..elements).map(Ok))
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(thread_publisher::ThreadPublisher::new(|| {
            [Err::<u64, _>(Error::msg("the read failed on purpose"))]
        }))
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }
}
