//! A publisher built on an upstream, for the bounded-buffering check: `rs_impl`'s
//! `IdentityProcessor` of [`BUFFER`] over `range(0..n)` — correct as it is (it requests its
//! buffer, then half of it as elements go downstream), broken by the `greedy` knob, which turns
//! the processor's first request upstream into unbounded demand (the shape of an operator that
//! requests `u64::MAX` because its downstream did, or because it cannot count).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rs_api::{
    Error, Publisher, PublisherExt, Subscriber, Subscription, SubscriptionRef, UNBOUNDED,
};
use rs_impl::processor::IdentityProcessor;
use rs_tck::instruments::UpstreamTap;
use rs_tck::publisher::{BufferBound, PublisherVerification, SupportedSubscribers};

/// The processor's buffer.
pub(crate) const BUFFER: usize = 8;

/// The verification; `bound` is what it declares.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OnUpstream {
    pub(crate) greedy: bool,
    pub(crate) bound: BufferBound,
}

impl OnUpstream {
    /// The correct publisher, declaring its real bound.
    pub(crate) fn correct() -> Self {
        OnUpstream {
            greedy: false,
            bound: BufferBound::AtMost(BUFFER as u64),
        }
    }
}

/// Passes everything through to the processor, but turns its first request into
/// `request(UNBOUNDED)` when greedy.
struct Greedy<S> {
    inner: S,
    greedy: bool,
}

struct GreedySubscription {
    inner: SubscriptionRef,
    first: AtomicBool,
}

impl Subscription for GreedySubscription {
    fn request(&self, n: u64) {
        if self.first.swap(false, Ordering::AcqRel) {
            self.inner.request(UNBOUNDED); // BUG: unbounded demand, whatever downstream asks
        } else {
            self.inner.request(n);
        }
    }
    fn cancel(&self) {
        self.inner.cancel();
    }
}

impl<S: Subscriber<u64>> Subscriber<u64> for Greedy<S> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if self.greedy {
            self.inner.on_subscribe(Arc::new(GreedySubscription {
                inner: subscription,
                first: AtomicBool::new(true),
            }));
        } else {
            self.inner.on_subscribe(subscription);
        }
    }
    fn on_next(&mut self, item: u64) {
        self.inner.on_next(item);
    }
    fn on_error(&mut self, error: Error) {
        self.inner.on_error(error);
    }
    fn on_complete(&mut self) {
        self.inner.on_complete();
    }
}

impl OnUpstream {
    fn build<P: Publisher<u64>>(&self, upstream: P) -> IdentityProcessor<u64> {
        let p = IdentityProcessor::new(BUFFER);
        upstream.subscribe(Box::new(Greedy {
            inner: p.clone(),
            greedy: self.greedy,
        }));
        p
    }
}

impl PublisherVerification for OnUpstream {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        self.build(rs_impl::source::range(0..elements))
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let p = IdentityProcessor::new(BUFFER);
        rs_impl::source::failed::<u64>(Error::msg("failed on purpose")).subscribe_with(p.clone());
        Some(p)
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::MANY
    }

    fn does_coordinated_emission(&self) -> bool {
        true
    }

    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<u64> + Send + 'static> {
        Some(self.build(tap.publisher(rs_impl::source::range(0..elements))))
    }

    fn max_buffered_from_upstream(&self) -> BufferBound {
        self.bound
    }
}
