//! `rs_impl::fanout`: the channel and the processor as publishers (multicast declared: the
//! 1.11 tests — the JVM's five and ours for a late joiner and for buffer growth — and the
//! multicast 2.13 check run as required ones, and pass), the processor through the
//! identity-processor verification, and both in the loom mode.
//!
//! | implementation | verification | notes |
//! |---|---|---|
//! | `fanout::channel` | publisher | capacity 4; a producer thread `blocking_send`s the `n` elements (waiting on the buffer) and completes; when a test is done with the publisher (every publisher handle dropped) and its subscribers have left, the channel closes and the thread's send fails, which ends it. In the loom build (where a factory runs inside the model and may not start a std thread) the `n` elements are sent into a buffer of `n` before the scenario subscribes, then the sender completes |
//! | `fanout::channel_with(grow_from(2))` | publisher | a buffer that starts at 2 and doubles up to 1024 ([`FanoutConfig::grow_from`]), fed by a producer thread paced by its subscribers: it sends while it is fewer than [`AHEAD`] elements ahead of what was delivered (over all subscribers, read from [`FanoutStats`](rs_impl::fanout::FanoutStats)). So the buffer fills as the subscribers spread apart, not all at once, and grows while they sit at different positions — where the growth check's lagging subscriber puts them (a producer that fills the buffer before anyone reads makes it grow before the readers spread, at position 0). The thread ends when the test has dropped the publisher |
//! | `fanout::FanoutProcessor` | publisher | capacity 16, subscribed to `source::range(0..n)`; bounded buffering over a tapped range, declared bound the capacity (the processor asks its upstream for exactly its free space) |
//! | `fanout::FanoutProcessor` | identity processor | the TCK's buffer size; `does_coordinated_emission() = false`: each subscriber reads at its own pace |

use rs_api::{BoxSubscriber, Error, Processor, Publisher, PublisherExt};
use rs_impl::fanout::{self, FanoutConfig, FanoutProcessor, FanoutPublisher};
use rs_impl::TrySendError;
use rs_tck::instruments::UpstreamTap;
use rs_tck::loom;
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::publisher::{self, BufferBound, PublisherVerification, SupportedSubscribers};
use rs_tck::suite::Suite;

/// The fanout suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![
        publisher::verify("fanout::channel", Channel),
        publisher::verify("fanout::channel_with(grow_from(2))", GrowingChannel),
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

/// How far the producer of [`GrowingChannel`] runs ahead of the deliveries.
const AHEAD: u64 = 4;

/// The buffer of [`GrowingChannel`]: from 2, doubling up to 1024.
fn growing() -> FanoutConfig {
    FanoutConfig::new(1024).grow_from(2)
}

/// `fanout::channel_with(grow_from(2))`: a producer (thread) of `0..n` paced by the
/// subscribers (see the table in the module docs).
#[derive(Debug, Clone, Copy)]
struct GrowingChannel;

/// The channel's publisher, handed to the test. The producer thread holds a clone of it, to
/// read the deliveries, so the channel cannot close by itself when the test is done with it
/// (every publisher handle dropped, no subscriber left): the thread watches for that through
/// the `alive` token and ends, dropping its clone and its sender.
#[derive(Clone)]
struct Paced {
    publisher: FanoutPublisher<u64>,
    _alive: std::sync::Arc<()>,
}

impl Publisher<u64> for Paced {
    fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
        self.publisher.subscribe(subscriber);
    }
}

impl PublisherVerification for GrowingChannel {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        let (tx, publisher) = fanout::channel_with::<u64>(growing());
        let alive = std::sync::Arc::new(());
        let (watch, test_gone) = (publisher.clone(), std::sync::Arc::downgrade(&alive));
        std::thread::spawn(move || {
            let (mut i, mut idle) = (0, 0u32);
            while i < elements {
                // Paced: at most AHEAD elements past the deliveries (and never into a full
                // buffer), waiting in sleeps that lengthen while nothing moves.
                let stats = watch.stats();
                if i < stats.deliveries.saturating_add(AHEAD) {
                    match tx.try_send(i) {
                        Ok(()) => {
                            (i, idle) = (i + 1, 0);
                            continue;
                        }
                        Err(TrySendError::Full(_)) => {}
                        Err(TrySendError::Closed(_)) => return, // nobody can receive any more
                    }
                }
                // What closes the channel, had the thread no publisher handle: the test's
                // handles gone and no subscriber left. The thread ends, dropping its own.
                if test_gone.strong_count() == 0 && stats.subscribers == 0 {
                    return;
                }
                idle = (idle + 1).min(7);
                std::thread::sleep(std::time::Duration::from_micros(50 << idle));
            }
            tx.complete();
        });
        Paced {
            publisher,
            _alive: alive,
        }
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let (tx, p) = fanout::channel_with::<u64>(growing());
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

    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<u64> + Send + 'static> {
        let p = FanoutProcessor::<u64>::new(processor::DEFAULT_BUFFER_SIZE);
        tap.publisher(rs_impl::source::range(0..elements))
            .subscribe_with(p.clone());
        Some(p)
    }

    /// The capacity (16): the processor asks its upstream for exactly its free space, so
    /// what it asked for and has not passed on never exceeds it.
    fn max_buffered_from_upstream(&self) -> BufferBound {
        BufferBound::AtMost(FanoutConfig::new(processor::DEFAULT_BUFFER_SIZE).capacity() as u64)
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
