//! `rs_impl`'s ready-made subscribers, each with a request strategy, as a blackbox and a
//! whitebox verification (the whitebox through [`ProbeReporting`]; the puppet's
//! `signal_cancel` is the handle's `cancel`), and in the loom mode (the blackbox one).
//!
//! | implementation | verifications |
//! |---|---|
//! | `subscriber::collect(Unbounded)`, `(Prefetch(8))`, `(OneByOne)` | subscriber whitebox, blackbox |
//! | `subscriber::for_each(Prefetch(4))` | subscriber whitebox, blackbox |

use rs_api::{BoxSubscriber, Subscriber};
use rs_impl::subscriber::{collect, for_each, Handle, RequestStrategy};
use rs_tck::loom;
use rs_tck::subscriber::{
    blackbox, whitebox, ProbeReporting, SubscriberBlackboxVerification, SubscriberPuppet,
    SubscriberWhiteboxVerification, WhiteboxSubscriberProbe,
};
use rs_tck::suite::Suite;

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

impl Canceller {
    /// Lets the subscription run without the handle (dropping a handle cancels).
    fn detach(self) {
        match self {
            Canceller::Collect(h) => h.detach(),
            Canceller::ForEach(h) => h.detach(),
        }
    }
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

    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        // Blackbox: nobody keeps the handle, which would cancel when dropped.
        let (s, handle) = self.make();
        handle.detach();
        s
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

impl SubscriberWhiteboxVerification for ReadyMade {
    type Item = u64;

    fn create_subscriber(
        &self,
        probe: WhiteboxSubscriberProbe<u64>,
    ) -> impl Subscriber<u64> + 'static {
        let (s, puppet) = self.make();
        ProbeReporting::new(s, probe, puppet)
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

/// The subscriber suites.
pub(crate) fn suites() -> Vec<Suite> {
    let mut suites = Vec::new();
    for (name, v) in ready_made() {
        suites.push(whitebox::verify(name, v));
        suites.push(blackbox::verify(name, v));
    }
    suites
}

/// The loom suites (the rule 2.5 scenario), over the same verifications.
pub(crate) fn loom_suites() -> Vec<Suite> {
    ready_made()
        .into_iter()
        .map(|(name, v)| loom::verify_subscriber(name, v))
        .collect()
}

/// The registered ready-made subscribers.
fn ready_made() -> [(&'static str, ReadyMade); 4] {
    let v = |kind, strategy| ReadyMade { kind, strategy };
    [
        (
            "subscriber::collect(Unbounded)",
            v(Kind::Collect, RequestStrategy::Unbounded),
        ),
        (
            "subscriber::collect(Prefetch(8))",
            v(Kind::Collect, RequestStrategy::Prefetch(8)),
        ),
        (
            "subscriber::collect(OneByOne)",
            v(Kind::Collect, RequestStrategy::OneByOne),
        ),
        (
            "subscriber::for_each(Prefetch(4))",
            v(Kind::ForEach, RequestStrategy::Prefetch(4)),
        ),
    ]
}
