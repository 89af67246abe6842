//! The registry's fanout entries: `rs_impl::fanout`'s channel and processor, as publishers
//! (with all five optional multicast 1.11 tests) and the processor through the identity
//! processor verification.
//!
//! | implementation | verification | notes |
//! |---|---|---|
//! | `fanout::channel` | publisher | capacity 4; a producer thread `send`s the `n` elements (blocking on the buffer) and drops its sender, which completes; the channel closes when a test's last subscriber leaves, which ends the thread |
//! | `fanout::FanoutProcessor` | publisher | buffer 16, subscribed to `source::range(0..n)` |
//! | `fanout::FanoutProcessor` | identity processor | buffer from the TCK (16); `does_coordinated_emission() = false`: each subscriber reads at its own pace |

use rs_api::{Error, PublisherExt};
use rs_impl::fanout::{self, FanoutConfig, FanoutProcessor};

use crate::processor::{self, IdentityProcessorVerification, ProcessorHalves};
use crate::publisher::{self, BoxPublisher, PublisherFactory};
use crate::suite::Suite;

fn config(capacity: usize) -> FanoutConfig {
    FanoutConfig::new(capacity.max(1)).expect("a capacity the fanout accepts")
}

fn failed_error() -> Error {
    Error::msg("rs-tck: the failed publisher")
}

/// A channel whose producer thread sends `0..n`, then completes (by dropping its sender).
fn channel(n: u64) -> BoxPublisher<u64> {
    let (mut tx, p) = fanout::channel::<u64>(config(4));
    std::thread::spawn(move || {
        for i in 0..n {
            if tx.send(i).is_err() {
                return; // the test's subscribers left: the channel closed
            }
        }
    });
    Box::new(p)
}

fn failed_channel() -> BoxPublisher<u64> {
    let (tx, p) = fanout::channel::<u64>(config(4));
    tx.fail(failed_error());
    Box::new(p)
}

fn processor(n: u64) -> BoxPublisher<u64> {
    let p = FanoutProcessor::<u64>::new(config(16));
    rs_impl::source::range(0..n).subscribe_with(p.clone());
    Box::new(p)
}

fn failed_processor() -> FanoutProcessor<u64> {
    let p = FanoutProcessor::<u64>::new(config(16));
    rs_impl::source::failed::<u64>(failed_error()).subscribe_with(p.clone());
    p
}

/// `FanoutProcessor` through the identity processor verification.
#[derive(Debug, Clone, Copy)]
struct Fanout;

impl IdentityProcessorVerification for Fanout {
    type Item = u64;

    fn create_identity_processor(&self, buffer_size: usize) -> ProcessorHalves<u64> {
        ProcessorHalves::of(FanoutProcessor::new(config(buffer_size)))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<BoxPublisher<u64>> {
        Some(Box::new(failed_processor()))
    }
}

/// The fanout suites.
pub(super) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify(
            "fanout::channel",
            PublisherFactory::new(channel).with_failed(failed_channel),
        ),
        publisher::verify(
            "fanout::FanoutProcessor",
            PublisherFactory::new(processor).with_failed(|| Box::new(failed_processor())),
        ),
        processor::verify("fanout::FanoutProcessor", Fanout),
    ]
}
