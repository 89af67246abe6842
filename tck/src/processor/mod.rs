//! Identity processor verification: the JVM TCK's `IdentityProcessorVerification`, 77 tests:
//! the 46 publisher tests and the 27 whitebox subscriber tests re-run through the processor
//! (rule 4.1), plus the processor's own four.
//!
//! Implement [`IdentityProcessorVerification`] and run it with [`verify`]; the same value runs
//! the loom scenarios on the processor ([`loom::verify_processor`](crate::loom::verify_processor)):
//!
//! ```
//! use rs_api::Processor;
//! use rs_impl::processor::IdentityProcessor;
//! use rs_tck::processor::IdentityProcessorVerification;
//!
//! struct Identity;
//! impl IdentityProcessorVerification for Identity {
//!     type Item = u64;
//!     fn create_identity_processor(
//!         &self,
//!         buffer_size: usize,
//!     ) -> impl Processor<u64, u64> + Clone + Send + 'static {
//!         IdentityProcessor::new(buffer_size)
//!     }
//!     fn create_element(&self, i: u64) -> u64 { i }
//!     fn does_coordinated_emission(&self) -> bool { true }
//! }
//! let suite = rs_tck::processor::verify("identity", Identity);
//! assert_eq!(suite.tests.len(), 77);
//! let t = suite.test("must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream");
//! assert_eq!(t.unwrap().run().outcome, rs_tck::outcome::Outcome::Passed);
//! ```
//!
//! # How the processor is tested
//!
//! The factory returns an [`rs_api::Processor`] that is a cheap `Clone` handle over shared
//! state, as processors in Rust are: one clone is subscribed upstream (the processor as a
//! subscriber), the others serve downstream subscribers (the processor as a publisher).
//!
//! * **As a publisher** (the 46 [publisher tests](crate::publisher)): `create_publisher(n)`
//!   creates a processor with [`processor_buffer_size`](IdentityProcessorVerification::processor_buffer_size)
//!   (default 16) and subscribes it to a helper publisher of `n` elements made by
//!   `create_element`; the failed publisher is
//!   [`create_failed_publisher`](IdentityProcessorVerification::create_failed_publisher).
//!   [`max_supported_subscribers`](IdentityProcessorVerification::max_supported_subscribers)
//!   is the publisher's declaration: by default (any number) the 1.11 tests are required of a
//!   processor, with [`does_coordinated_emission`](IdentityProcessorVerification::does_coordinated_emission)
//!   telling them to let every subscriber request before they wait.
//! * **As a subscriber** (the 27 [whitebox tests](crate::subscriber)): `create_subscriber(probe)`
//!   creates a processor and subscribes a downstream subscriber to it that reports to the
//!   probe, and whose puppet forwards `trigger_request`/`signal_cancel` to its downstream
//!   subscription. The processor's upstream is the TCK's [`ManualPublisher`], which checks
//!   every call the processor makes upstream. So, as in the JVM TCK, the tests expect a
//!   processor whose only downstream cancels to cancel its upstream (3.14 lets it). Two tests
//!   are the processor's own here: 3.15 and 3.16 (untested for a plain subscriber, whose
//!   subscription is the TCK's) check the processor's downstream subscription: `cancel` and
//!   `request` (including `request(0)`, which must come back as `on_error`) return normally.
//!   The bounded-buffering check runs the processor over a tapped helper upstream
//!   ([`UpstreamTap`]) and holds it to [`max_buffered_elements`](IdentityProcessorVerification::max_buffered_elements)
//!   (default: the buffer size it was created with); the multicast checks of our own (buffer
//!   growth, a panicking subscriber) run because a processor declares several subscribers by
//!   default.
//! * **Its own four tests**, with a [`ManualPublisher`] upstream and [`ManualSubscriber`]s
//!   downstream:
//!
//! | JVM TCK test | ours | rule | what ours checks |
//! |---|---|---|---|
//! | `required_spec104_mustCallOnErrorOnAllItsSubscribersIfItEncountersANonRecoverableError` | `required_spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error` | 1.4 | as the JVM: 2 subscribers (skipped if `max_supported_subscribers() < 2`), one element each, then the upstream error must reach both |
//! | `mustImmediatelyPassOnOnErrorEventsReceivedFromItsUpstreamToItsDownstream` | `must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream` | 4.2 | as the JVM (the error reaches a subscriber that never requested), **plus the recovery branch's obligation**: the failed upstream subscription counts as cancelled, so a downstream `request` and `cancel` afterwards must not reach upstream |
//! | `required_mustRequestFromUpstreamForElementsThatHaveBeenRequestedLongAgo` | `required_must_request_from_upstream_for_elements_that_have_been_requested_long_ago` | 2.1 | as the JVM, with both `does_coordinated_emission` branches |
//! | — (ours) | `required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight` | 4.2 | one element delivered, then up to 2 more sent that the subscriber has not requested (held), then the upstream's `on_error`: with [`UpstreamErrorPolicy::Immediately`] (the default) the error must come at once, without a request, and nothing after it; with [`UpstreamErrorPolicy::AfterHeldElements`] nothing may come without demand, each held element comes on request, and the error right after the last, without a request. Skipped, saying so, if the processor never requested beyond its subscriber (it holds nothing) |
//!
//! # Rule 4.2's recovery branch
//!
//! A processor may recover from an upstream `on_error` instead of forwarding it, but must then
//! treat that subscription as cancelled. For an *identity* processor there is nothing to
//! recover to (it would have to invent elements), so the JVM's test requires forwarding; the
//! one obligation both branches share — no `request` or `cancel` on the failed subscription —
//! is checked in the same test (and by the [`ManualPublisher`]'s 2.4 check in every test).
//!
//! # Each check can fail
//!
//! `tck/tests/processor_self_test.rs` runs every check over a broken processor (an
//! [`IdentityProcessor`](rs_impl::processor::IdentityProcessor) behind interceptors with the
//! same knobs as the broken publisher and the broken subscriber, and a few of its own: unbounded
//! demand upstream for the bounded-buffering check; an error held until a request, an error
//! that overtakes the held elements, an error that waits for a request after them, for the
//! in-flight check).

mod own;

use std::fmt;
use std::sync::Arc;

use rs_api::{BoxPublisher, Error, Processor, Publisher, Subscriber, SubscriptionRef};

use crate::env::Timeouts;
use crate::instruments::{ManualSubscriber, UpstreamTap};
use crate::publisher::{self, BufferBound, PublisherVerification, SupportedSubscribers};
use crate::subscriber::whitebox::{self, SubscriberWhiteboxVerification};
use crate::subscriber::{
    ManualPublisher, SubscriberBlackboxVerification, SubscriberPuppet, WhiteboxSubscriberProbe,
};
use crate::suite::{Suite, TestSpec};

/// The verification's name in reports.
pub const VERIFICATION: &str = "identity_processor";

/// The JVM TCK's default processor buffer size (`TEST_BUFFER_SIZE`).
pub const DEFAULT_BUFFER_SIZE: usize = 16;

/// What a processor implementation provides to be verified (the JVM's
/// `IdentityProcessorVerification`): one factory,
/// [`create_identity_processor`](Self::create_identity_processor), the elements to send, and
/// optional hooks with the JVM's defaults.
///
/// Shared between tests that run at once on several threads (hence `Send + Sync`).
pub trait IdentityProcessorVerification: Send + Sync + 'static {
    /// The element type.
    type Item: Send + Sync + Clone + fmt::Debug + PartialEq + 'static;

    /// A fresh identity processor buffering at most `buffer_size` elements: a `Clone` handle,
    /// whose clones are the same processor (see the [module docs](self)). The JVM's
    /// `createIdentityProcessor(int)`.
    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<Self::Item, Self::Item> + Clone + Send + 'static;

    /// The element with index `element`; may be called from any thread.
    fn create_element(&self, element: u64) -> Self::Item;

    /// A publisher that calls `on_subscribe` and then `on_error` (for the publisher tests that
    /// need one); `None` (the default) skips them.
    fn create_failed_publisher(&self) -> Option<impl Publisher<Self::Item> + Send + 'static> {
        None::<BoxPublisher<Self::Item>>
    }

    /// As [`PublisherVerification::max_elements_from_publisher`].
    fn max_elements_from_publisher(&self) -> u64 {
        publisher::DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER
    }

    /// As [`PublisherVerification::bounded_depth_of_on_next_and_request_recursion`].
    fn bounded_depth_of_on_next_and_request_recursion(&self) -> u64 {
        1
    }

    /// As [`PublisherVerification::skip_stochastic_tests`].
    fn skip_stochastic_tests(&self) -> bool {
        false
    }

    /// How many downstream subscribers the processor supports at once (default: any number, as
    /// the JVM's). Below 2 skips the tests that need two and the publisher tests of rule 1.11;
    /// 2 or more makes those 1.11 tests required (as
    /// [`PublisherVerification::max_supported_subscribers`] does for a publisher), and a 1.11 test
    /// that needs more subscribers than declared is skipped.
    fn max_supported_subscribers(&self) -> u64 {
        u64::MAX
    }

    /// Whether the processor emits an element only when every subscriber has demand for it
    /// (the JVM's `doesCoordinatedEmission`); the 1.11 tests then let every subscriber request
    /// before they wait for an element.
    fn does_coordinated_emission(&self) -> bool {
        false
    }

    /// The buffer size of the processors the tests create (default 16, as the JVM).
    fn processor_buffer_size(&self) -> usize {
        DEFAULT_BUFFER_SIZE
    }

    /// How much a processor made by `create_identity_processor(buffer_size)` may have taken
    /// from its upstream and not passed on — outstanding upstream demand plus the elements it
    /// holds — whatever its subscriber requests: the bound of the bounded-buffering check
    /// (`required_must_not_request_more_from_upstream_than_the_declared_buffer_holds`, run with
    /// a TCK upstream that counts every request and a subscriber that requests one at a time).
    ///
    /// The default is `buffer_size` itself, what the factory's contract says: a processor
    /// buffering at most `buffer_size` elements. A processor with more in flight by design (a
    /// prefetching input side in front of its buffer, say) declares its real bound here;
    /// [`BufferBound::Undeclared`] skips the check, saying so. A processor that requests
    /// unbounded demand upstream while its subscriber asks for little fails it.
    fn max_buffered_elements(&self, buffer_size: usize) -> BufferBound {
        BufferBound::AtMost(u64::try_from(buffer_size).unwrap_or(u64::MAX))
    }

    /// What the processor does with an upstream `on_error` that arrives while it holds
    /// elements its subscriber has not requested yet; the check
    /// `required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight`
    /// holds it to the declaration. The default, [`UpstreamErrorPolicy::Immediately`], is rule
    /// 4.2's "propagate the onError signal to its Subscribers immediately" (and what the JVM
    /// TCK's `mustImmediatelyPassOnOnErrorEventsReceivedFromItsUpstreamToItsDownstream`
    /// expects): the held elements are dropped.
    fn upstream_error_policy(&self) -> UpstreamErrorPolicy {
        UpstreamErrorPolicy::Immediately
    }

    /// The timeouts of every test (default: [`Timeouts::from_env`]).
    fn timeouts(&self) -> Timeouts {
        Timeouts::from_env()
    }
}

/// What a processor does with an upstream `on_error` that arrives while it holds elements its
/// subscriber has not requested ([`IdentityProcessorVerification::upstream_error_policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamErrorPolicy {
    /// The error goes downstream at once, without demand; the held elements are dropped (rule
    /// 4.2's "immediately").
    Immediately,
    /// The held elements go first, each as it is requested; the error follows the last of
    /// them at once, without further demand.
    AfterHeldElements,
}

/// The identity-processor verification's 77 tests for `verification`, reported under
/// `implementation`.
///
/// # Examples
///
/// See the [module docs](self).
pub fn verify<V: IdentityProcessorVerification>(
    implementation: impl Into<String>,
    verification: V,
) -> Suite {
    let implementation = implementation.into();
    let v = Arc::new(verification);
    let timeouts = v.timeouts();
    let mut p = Suite::new(
        implementation.clone(),
        VERIFICATION,
        timeouts,
        AsPublisher::new(v.clone()),
        publisher::specs::<AsPublisher<V>>(),
    );
    if v.max_supported_subscribers() >= 2 {
        publisher::required_multicast(&mut p);
    }
    let w = Suite::new(
        implementation.clone(),
        VERIFICATION,
        timeouts,
        AsWhitebox(v.clone()),
        whitebox_specs::<V>(),
    );
    let own = Suite::new(
        implementation.clone(),
        VERIFICATION,
        timeouts,
        Own(v),
        own::specs::<V>(),
    );
    Suite {
        implementation,
        verification: VERIFICATION,
        tests: [p.tests, w.tests, own.tests].concat(),
    }
}

/// The whitebox specs, with 3.15 and 3.16 run on the processor's downstream subscription.
fn whitebox_specs<V: IdentityProcessorVerification>() -> Vec<TestSpec<AsWhitebox<V>>> {
    whitebox::specs::<AsWhitebox<V>>()
        .into_iter()
        .map(|mut spec| {
            if spec.rule == "3.15" {
                spec.run = own::spec315::<V>;
            } else if spec.rule == "3.16" {
                spec.run = own::spec316::<V>;
            }
            spec
        })
        .collect()
}

/// The processor seen as a publisher (the JVM's `createPublisher`): a fresh processor with
/// `buffer` elements of buffer, subscribed to a helper publisher of `create_element`s.
pub(crate) struct AsPublisher<V> {
    v: Arc<V>,
    buffer: usize,
}

impl<V: IdentityProcessorVerification> AsPublisher<V> {
    /// With the verification's [`processor_buffer_size`](IdentityProcessorVerification::processor_buffer_size).
    pub(crate) fn new(v: Arc<V>) -> Self {
        let buffer = v.processor_buffer_size();
        AsPublisher { v, buffer }
    }

    /// With a buffer of `buffer` elements.
    pub(crate) fn with_buffer(v: Arc<V>, buffer: usize) -> Self {
        AsPublisher { v, buffer }
    }
}

impl<V: IdentityProcessorVerification> PublisherVerification for AsPublisher<V> {
    type Item = V::Item;

    fn create_publisher(&self, elements: u64) -> impl Publisher<V::Item> + Send + 'static {
        let processor = self.v.create_identity_processor(self.buffer);
        let v = self.v.clone();
        let helper = rs_impl::source::from_fn(move || {
            let v = v.clone();
            (0..elements).map(move |i| v.create_element(i))
        });
        helper.subscribe(Box::new(processor.clone()));
        processor
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<V::Item> + Send + 'static> {
        self.v.create_failed_publisher()
    }

    fn max_elements_from_publisher(&self) -> u64 {
        self.v.max_elements_from_publisher()
    }

    fn bounded_depth_of_on_next_and_request_recursion(&self) -> u64 {
        self.v.bounded_depth_of_on_next_and_request_recursion()
    }

    fn skip_stochastic_tests(&self) -> bool {
        self.v.skip_stochastic_tests()
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::AtMost(self.v.max_supported_subscribers())
    }

    fn does_coordinated_emission(&self) -> bool {
        self.v.does_coordinated_emission()
    }

    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<V::Item> + Send + 'static> {
        let processor = self.v.create_identity_processor(self.buffer);
        let v = self.v.clone();
        let helper = rs_impl::source::from_fn(move || {
            let v = v.clone();
            (0..elements).map(move |i| v.create_element(i))
        });
        tap.publisher(helper).subscribe(Box::new(processor.clone()));
        Some(processor)
    }

    fn max_buffered_from_upstream(&self) -> BufferBound {
        self.v.max_buffered_elements(self.buffer)
    }
}

/// The processor seen as a whitebox subscriber (the JVM's `createSubscriber(probe)`).
pub(crate) struct AsWhitebox<V>(pub(crate) Arc<V>);

impl<V: IdentityProcessorVerification> SubscriberWhiteboxVerification for AsWhitebox<V> {
    type Item = V::Item;

    fn create_subscriber(
        &self,
        probe: WhiteboxSubscriberProbe<V::Item>,
    ) -> impl Subscriber<V::Item> + 'static {
        let processor = self
            .0
            .create_identity_processor(self.0.processor_buffer_size());
        processor.subscribe(Box::new(Downstream {
            probe,
            subscribed: false,
        }));
        processor
    }

    fn create_element(&self, element: u64) -> V::Item {
        self.0.create_element(element)
    }
}

/// The processor seen as a plain subscriber with `buffer` elements of buffer (the loom
/// scenario of rule 2.5).
pub(crate) struct AsBlackbox<V> {
    pub(crate) v: Arc<V>,
    pub(crate) buffer: usize,
}

impl<V: IdentityProcessorVerification> SubscriberBlackboxVerification for AsBlackbox<V> {
    type Item = V::Item;

    fn create_subscriber(&self) -> impl Subscriber<V::Item> + 'static {
        self.v.create_identity_processor(self.buffer)
    }

    fn create_element(&self, element: u64) -> V::Item {
        self.v.create_element(element)
    }

    /// A processor is a `Clone` handle: the 2.5 scenario races `on_subscribe` on two clones.
    fn create_cloneable_subscriber(&self) -> Option<impl Subscriber<V::Item> + Clone + 'static> {
        Some(self.v.create_identity_processor(self.buffer))
    }
}

/// The downstream subscriber of a processor under the whitebox tests: reports to the probe;
/// its puppet forwards to the processor's downstream subscription.
struct Downstream<T> {
    probe: WhiteboxSubscriberProbe<T>,
    subscribed: bool,
}

struct ForwardingPuppet(SubscriptionRef);

impl SubscriberPuppet for ForwardingPuppet {
    fn trigger_request(&self, elements: u64) {
        self.0.request(elements);
    }
    fn signal_cancel(&self) {
        self.0.cancel();
    }
}

impl<T: Send + fmt::Debug + PartialEq + 'static> Subscriber<T> for Downstream<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if self.subscribed {
            subscription.cancel(); // the probe must pass the subscriber rules too (2.5)
            return;
        }
        self.subscribed = true;
        self.probe
            .register_on_subscribe(ForwardingPuppet(subscription));
    }
    fn on_next(&mut self, item: T) {
        self.probe.register_on_next(item);
    }
    fn on_error(&mut self, error: Error) {
        self.probe.register_on_error(error);
    }
    fn on_complete(&mut self) {
        self.probe.register_on_complete();
    }
}

/// The subject of the processor's own tests.
pub(crate) struct Own<V>(pub(crate) Arc<V>);

/// A processor with the TCK's publisher upstream (the JVM's `TestSetup`).
pub(crate) struct Setup<V: IdentityProcessorVerification> {
    pub(crate) upstream: ManualPublisher<V::Item>,
    pub(crate) processor: BoxPublisher<V::Item>,
    next: std::sync::atomic::AtomicU64,
    v: Arc<V>,
}

impl<V: IdentityProcessorVerification> Setup<V> {
    pub(crate) fn new(v: &Arc<V>, env: &crate::env::TestEnvironment) -> Self {
        let processor = v.create_identity_processor(v.processor_buffer_size());
        let upstream = ManualPublisher::new(env, crate::subscriber::Mode::Manual);
        upstream.subscribe(Box::new(processor.clone()));
        Setup {
            upstream,
            processor: Box::new(processor),
            next: std::sync::atomic::AtomicU64::new(0),
            v: v.clone(),
        }
    }

    pub(crate) fn subscriber(
        &self,
        env: &crate::env::TestEnvironment,
    ) -> crate::outcome::TestResult<ManualSubscriber<V::Item>> {
        ManualSubscriber::subscribe(env, &*self.processor)
    }

    /// Waits for upstream demand, sends the next element; returns it.
    pub(crate) fn send_next(&self, context: &str) -> crate::outcome::TestResult<V::Item> {
        self.upstream.ensure_demand(1, context)?;
        let x = self
            .v
            .create_element(self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        self.upstream.send_next(x.clone())?;
        Ok(x)
    }
}
