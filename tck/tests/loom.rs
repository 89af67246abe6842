//! The TCK's loom mode applied to every built-in publisher and subscriber of `rs-impl`.
//!
//! Run with `CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg rs_loom" LOOM_MAX_PREEMPTIONS=2
//! cargo test --release --test loom -p rs-tck -- --test-threads=1` (see `scripts/loom.sh`).
#![cfg(rs_loom)]

use rs_api::Error;
use rs_impl::source::{self, Pull, Pulled};
use rs_impl::subscriber::{collect, for_each, RequestStrategy};
use rs_tck::loom::{publisher_scenarios, subscriber_scenarios};

#[test]
fn range_publisher() {
    publisher_scenarios(|n| source::range(0u64..n));
}

#[test]
fn iter_publisher() {
    publisher_scenarios(|n| source::from_iter((0..n).map(|i| format!("e{i}")).collect::<Vec<_>>()));
}

#[test]
fn fn_publisher() {
    publisher_scenarios(|n| source::from_fn(move || 0..n));
}

/// A `Pull` source of `n` elements.
struct Count(u64);

impl Pull<u64> for Count {
    fn pull(&mut self) -> Pulled<u64> {
        if self.0 == 0 {
            return Pulled::Complete;
        }
        self.0 -= 1;
        Pulled::Next(self.0)
    }
}

#[test]
fn pull_publisher() {
    publisher_scenarios(|n| source::from_pull(move || Count(n)));
}

// `empty`, `failed` and `never` have no elements, so the element scenarios do not apply; the
// cancel race still does, and they must survive every scenario's calls without a violation.

#[test]
fn empty_publisher_cancel_and_request_race() {
    // Completes at once: the scenario's 1.8 check (no terminal) does not apply; run the probe
    // through the 3.9 race instead, which must be answered by at most one terminal signal.
    rs_tck::loom::required_spec303_reentrant_and_concurrent_request(|_| source::empty::<u64>());
}

#[test]
fn never_publisher_cancel_racing() {
    rs_tck::loom::required_spec312_cancel_racing_emission(|_| source::never::<u64>());
}

#[test]
fn failed_publisher_error_once() {
    rs_tck::loom::required_spec303_reentrant_and_concurrent_request(|_| {
        source::failed::<u64>(Error::msg("boom"))
    });
}

#[test]
fn collect_subscriber() {
    subscriber_scenarios::<u64, _, _>(|| collect(RequestStrategy::Prefetch(2)).0);
    subscriber_scenarios::<u64, _, _>(|| collect(RequestStrategy::Unbounded).0);
}

/// The identity processor as a publisher (fed by `range`, buffer 2 so it refills while the
/// scenarios run) and as a subscriber (racing `on_subscribe` of two upstreams).
#[test]
fn identity_processor() {
    use rs_api::PublisherExt;
    use rs_impl::processor::IdentityProcessor;
    publisher_scenarios(|n| {
        let p = IdentityProcessor::<u64>::new(2);
        source::range(0u64..n).subscribe_with(p.clone());
        p
    });
    subscriber_scenarios::<u64, _, _>(|| IdentityProcessor::<u64>::new(2));
}

/// The fanout processor as a publisher, fed by `range` through a buffer of 2.
#[test]
fn fanout_processor_publisher() {
    use rs_api::PublisherExt;
    use rs_impl::fanout::{FanoutConfig, FanoutProcessor};
    publisher_scenarios(|n| {
        let p = FanoutProcessor::<u64>::new(FanoutConfig::new(2).unwrap());
        source::range(0u64..n).subscribe_with(p.clone());
        p
    });
}

/// The fanout processor as a subscriber (racing `on_subscribe` of two upstreams).
#[test]
fn fanout_processor_subscriber() {
    use rs_impl::fanout::{FanoutConfig, FanoutProcessor};
    subscriber_scenarios::<u64, _, _>(|| {
        FanoutProcessor::<u64>::new(FanoutConfig::new(2).unwrap())
    });
}

/// The fanout channel as a publisher: its `n` elements are sent before the scenario
/// subscribes (they wait in a buffer of `n`), then the sender completes.
#[test]
fn fanout_channel_publisher() {
    use rs_impl::fanout::{self, FanoutConfig};
    publisher_scenarios(|n| {
        let (mut tx, p) = fanout::channel::<u64>(FanoutConfig::new(n.max(1) as usize).unwrap());
        for i in 0..n {
            tx.try_send(i).unwrap();
        }
        tx.complete();
        p
    });
}

#[test]
fn for_each_subscriber() {
    subscriber_scenarios::<u64, _, _>(|| for_each(RequestStrategy::OneByOne, |_: u64| {}).0);
}

// ----- the scenarios can fail: broken implementations they must reject ---------------------------

mod broken {
    use rs_api::{BoxSubscriber, Error, Publisher, Subscriber, Subscription, SubscriptionRef};

    /// BUG: ignores demand: emits every element and completes inside `subscribe` (rule 1.1).
    pub(crate) struct BrokenIgnoresDemand(pub(crate) u64);

    struct Noop;

    impl Subscription for Noop {
        fn request(&self, _n: u64) {}
        fn cancel(&self) {}
    }

    impl Publisher<u64> for BrokenIgnoresDemand {
        fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
            subscriber.on_subscribe(std::sync::Arc::new(Noop));
            for i in 0..self.0 {
                subscriber.on_next(i);
            }
            subscriber.on_complete();
        }
    }

    /// BUG: keeps whichever subscription came last and requests from it (rule 2.5).
    #[derive(Default)]
    pub(crate) struct BrokenKeepsSecond(Option<SubscriptionRef>);

    impl Subscriber<u64> for BrokenKeepsSecond {
        fn on_subscribe(&mut self, subscription: SubscriptionRef) {
            subscription.request(1);
            self.0 = Some(subscription);
        }
        fn on_next(&mut self, _item: u64) {}
        fn on_error(&mut self, _error: Error) {}
        fn on_complete(&mut self) {}
    }
}

#[test]
fn spec107_error_scenario_should_fail_by_ignoring_demand() {
    rs_impl::loom::assert_rejected(
        "spec107_error_scenario_should_fail_by_ignoring_demand",
        "rule 1.1",
        || rs_tck::loom::required_spec107_error_racing_on_next(broken::BrokenIgnoresDemand),
    );
}

#[test]
fn spec205_scenario_should_fail_by_keeping_the_second_subscription() {
    rs_impl::loom::assert_rejected(
        "spec205_scenario_should_fail_by_keeping_the_second_subscription",
        "rule 2.5",
        || {
            rs_tck::loom::required_spec205_racing_on_subscribe::<u64, _, _>(
                broken::BrokenKeepsSecond::default,
            )
        },
    );
}
