//! `rs_impl::fanout`: the channel and the processor as publishers (multicast: the five optional
//! 1.11 tests run and pass), the processor through the identity-processor verification, and
//! both in the loom mode.
//!
//! | implementation | verification | notes |
//! |---|---|---|
//! | `fanout::channel` | publisher | capacity 4; a producer thread `blocking_send`s the `n` elements (waiting on the buffer) and completes; when a test is done with the publisher (every publisher handle dropped) and its subscribers have left, the channel closes and the thread's send fails, which ends it. In the loom build (where a factory runs inside the model and may not start a std thread) the `n` elements are sent into a buffer of `n` before the scenario subscribes, then the sender completes |
//! | `fanout::FanoutProcessor` | publisher | capacity 16, subscribed to `source::range(0..n)` |
//! | `fanout::FanoutProcessor` | identity processor | the TCK's buffer size; `does_coordinated_emission() = false`: each subscriber reads at its own pace |

use rs_api::{Error, Processor, Publisher, PublisherExt};
use rs_impl::fanout::{self, FanoutProcessor};
use rs_tck::loom;
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::publisher::{self, PublisherVerification, SupportedSubscribers};
use rs_tck::suite::Suite;

/// The fanout suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify("fanout::channel", Channel),
        publisher::verify("fanout::FanoutProcessor", FanoutOverRange),
        processor::verify("fanout::FanoutProcessor", Fanout),
    ]
}

/// The loom suites, over the same verifications.
pub(crate) fn loom_suites() -> Vec<Suite> {
    vec![
        loom::verify_publisher("fanout::channel", Channel),
        loom::verify_processor("fanout::FanoutProcessor", Fanout),
    ]
}

fn failure() -> Error {
    Error::msg("rs-tck: the failed publisher")
}

/// A processor subscribed to `source::failed`.
fn failed_processor() -> FanoutProcessor<u64> {
    let p = FanoutProcessor::<u64>::new(processor::DEFAULT_BUFFER_SIZE);
    rs_impl::source::failed::<u64>(failure()).subscribe_with(p.clone());
    p
}

/// `fanout::channel`: a producer (thread) of `0..n`.
#[derive(Debug, Clone, Copy)]
struct Channel;

impl PublisherVerification for Channel {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        if rs_impl::loom::IS_LOOM {
            // A buffer of n (at least 1: the fanout's size rule) holds the n elements.
            let (tx, p) = fanout::channel::<u64>((elements as usize).max(1));
            for i in 0..elements {
                tx.try_send(i).expect("a buffer of n holds n elements");
            }
            tx.complete();
            return p;
        }
        let (tx, p) = fanout::channel::<u64>(4);
        std::thread::spawn(move || {
            for i in 0..elements {
                if tx.blocking_send(i).is_err() {
                    return; // nobody can receive any more: the channel closed
                }
            }
            tx.complete();
        });
        p
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let (tx, p) = fanout::channel::<u64>(4);
        tx.fail(failure());
        Some(p)
    }

    /// Multicast: the 1.11 checks are required.
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }
}

/// `FanoutProcessor` over `source::range(0..n)`.
#[derive(Debug, Clone, Copy)]
struct FanoutOverRange;

impl PublisherVerification for FanoutOverRange {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        let p = FanoutProcessor::<u64>::new(processor::DEFAULT_BUFFER_SIZE);
        rs_impl::source::range(0..elements).subscribe_with(p.clone());
        p
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(failed_processor())
    }

    /// Multicast: the 1.11 checks are required.
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }
}

/// `FanoutProcessor` through the identity-processor verification.
#[derive(Debug, Clone, Copy)]
struct Fanout;

impl IdentityProcessorVerification for Fanout {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        FanoutProcessor::new(buffer_size)
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(failed_processor())
    }
}
