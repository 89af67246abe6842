//! The registry's subscriber and processor entries: `rs_impl`'s ready-made subscribers
//! (blackbox, and whitebox through [`ProbeReporting`]) and its identity processor.

use rs_api::{BoxSubscriber, Error, Publisher};
use rs_impl::processor::IdentityProcessor;
use rs_impl::subscriber::{collect, for_each, Handle, RequestStrategy};

use crate::processor::{self, IdentityProcessorVerification, ProcessorHalves};
use crate::publisher::BoxPublisher;
use crate::subscriber::{
    blackbox, whitebox, ProbeReporting, SubscriberBlackboxVerification, SubscriberPuppet,
    SubscriberWhiteboxVerification, WhiteboxSubscriberProbe,
};
use crate::suite::Suite;

/// Which ready-made subscriber.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Collect,
    ForEach,
}

/// A ready-made subscriber with a strategy, as a blackbox and a whitebox verification.
#[derive(Debug, Clone, Copy)]
struct ReadyMade {
    kind: Kind,
    strategy: RequestStrategy,
}

impl ReadyMade {
    fn make(&self) -> (BoxSubscriber<u64>, Canceller) {
        match self.kind {
            Kind::Collect => {
                let (s, h) = collect::<u64>(self.strategy);
                (Box::new(s), Canceller::Collect(h))
            }
            Kind::ForEach => {
                let (s, h) = for_each(self.strategy, |_x: u64| {});
                (Box::new(s), Canceller::ForEach(h))
            }
        }
    }
}

/// The puppet of a ready-made subscriber: `signal_cancel` is its handle's `cancel`;
/// `trigger_request` has nothing to do, because the subscriber requests by its strategy and
/// keeps requesting as it consumes (so its demand reaches any `n` eventually).
enum Canceller {
    Collect(Handle<Vec<u64>>),
    ForEach(Handle<()>),
}

impl SubscriberPuppet for Canceller {
    fn trigger_request(&self, _elements: u64) {}

    fn signal_cancel(&self) {
        match self {
            Canceller::Collect(h) => h.cancel(),
            Canceller::ForEach(h) => h.cancel(),
        }
    }
}

impl SubscriberBlackboxVerification for ReadyMade {
    type Item = u64;
    type Subscriber = BoxSubscriber<u64>;

    fn create_subscriber(&self) -> BoxSubscriber<u64> {
        self.make().0
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

impl SubscriberWhiteboxVerification for ReadyMade {
    type Item = u64;

    fn create_subscriber(&self, probe: WhiteboxSubscriberProbe<u64>) -> BoxSubscriber<u64> {
        let (s, puppet) = self.make();
        Box::new(ProbeReporting::new(s, probe, puppet))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

/// `rs_impl::processor::IdentityProcessor` with the JVM's buffer size.
#[derive(Debug, Clone, Copy)]
struct Identity;

impl IdentityProcessorVerification for Identity {
    type Item = u64;

    fn create_identity_processor(&self, buffer_size: usize) -> ProcessorHalves<u64> {
        ProcessorHalves::of(IdentityProcessor::new(buffer_size))
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<BoxPublisher<u64>> {
        let p = IdentityProcessor::new(processor::DEFAULT_BUFFER_SIZE);
        rs_impl::source::failed::<u64>(Error::msg("rs-tck: the failed publisher"))
            .subscribe(Box::new(p.clone()));
        Some(Box::new(p))
    }

    fn does_coordinated_emission(&self) -> bool {
        true
    }
}

/// The subscriber and processor suites.
pub(super) fn suites() -> Vec<Suite> {
    let ready_made = [
        (
            "subscriber::collect(Unbounded)",
            Kind::Collect,
            RequestStrategy::Unbounded,
        ),
        (
            "subscriber::collect(Prefetch(8))",
            Kind::Collect,
            RequestStrategy::Prefetch(8),
        ),
        (
            "subscriber::collect(OneByOne)",
            Kind::Collect,
            RequestStrategy::OneByOne,
        ),
        (
            "subscriber::for_each(Prefetch(4))",
            Kind::ForEach,
            RequestStrategy::Prefetch(4),
        ),
    ];
    let mut suites = Vec::new();
    for (name, kind, strategy) in ready_made {
        let v = ReadyMade { kind, strategy };
        suites.push(whitebox::verify(name, v));
        suites.push(blackbox::verify(name, v));
    }
    suites.push(processor::verify("processor::IdentityProcessor", Identity));
    suites
}
