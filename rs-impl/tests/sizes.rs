//! The crate's one size rule: every capacity, buffer and prefetch is a `usize`, and a size of 0
//! panics at construction (as tokio's `mpsc::channel(0)` does), with a message that names the
//! constructor — except the push source, where 0 means something (no buffer beyond demand).
//! Each constructor that takes a size is listed here; a new one belongs in the table.

// Tests use plain std types; the facade ban is for rs-impl/src.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use rs_api::Publisher;
use rs_impl::boundary::{BoundaryConfig, BoundarySubscriber};
use rs_impl::compat::{blocking_iter, from_async, stream_subscriber, to_stream, AsyncSubscriber};
use rs_impl::fanout::{self, FanoutConfig, FanoutProcessor};
use rs_impl::flow::{Flow, IslandProcessor};
use rs_impl::lanes::LanesConfig;
use rs_impl::merge::{observe_on, MergeConfig};
use rs_impl::processor::IdentityProcessor;
use rs_impl::subscriber::{collect, external, RequestStrategy};
use rs_impl::{source, Runtime};

struct Ignore;

#[async_trait::async_trait]
impl AsyncSubscriber<u8> for Ignore {
    async fn on_next(&mut self, _: u8) -> std::ops::ControlFlow<()> {
        std::ops::ControlFlow::Continue(())
    }
}

/// A named call of a constructor.
type Call = (&'static str, Box<dyn Fn()>);

/// Every constructor that takes a size, called with 0.
fn zero_sized() -> Vec<Call> {
    vec![
        (
            "fanout::channel(0)",
            Box::new(|| drop(fanout::channel::<u8>(0))),
        ),
        (
            "FanoutConfig::new(0)",
            Box::new(|| drop(FanoutConfig::new(0))),
        ),
        (
            "FanoutProcessor::new(0)",
            Box::new(|| drop(FanoutProcessor::<u8>::new(0))),
        ),
        (
            "IdentityProcessor::new(0)",
            Box::new(|| drop(IdentityProcessor::<u8>::new(0))),
        ),
        (
            "RequestStrategy::Prefetch(0)",
            Box::new(|| drop(collect::<u8>(RequestStrategy::Prefetch(0)))),
        ),
        (
            "to_stream(_, 0)",
            Box::new(|| drop(to_stream(&source::range(0u8..3), 0))),
        ),
        (
            "blocking_iter(_, 0)",
            Box::new(|| drop(blocking_iter(&source::range(0u8..3), 0))),
        ),
        (
            "stream_subscriber(0)",
            Box::new(|| drop(stream_subscriber::<u8>(0))),
        ),
        (
            "from_async(_, 0, _)",
            Box::new(|| {
                let rt = Runtime::thread_per_task();
                drop(from_async::<u8, _>(Ignore, 0, &rt));
            }),
        ),
        (
            "subscriber::external(0)",
            Box::new(|| drop(external::<u8>(0))),
        ),
        (
            "BoundaryConfig::size(0)",
            Box::new(|| {
                let _ = BoundaryConfig::new().size(0);
            }),
        ),
        (
            "BoundarySubscriber::new(0)",
            Box::new(|| drop(BoundarySubscriber::<u8>::new(0))),
        ),
        (
            "Flow::from_publisher_with(_, 0)",
            Box::new(|| drop(Flow::from_publisher_with(source::range(0u8..3), 0))),
        ),
        (
            "Flow::from_shared_publisher(_, 0)",
            Box::new(|| {
                drop(Flow::from_shared_publisher(
                    Arc::new(source::range(0u8..3)),
                    0,
                ))
            }),
        ),
        (
            "IslandProcessor::new(_, 0, _)",
            Box::new(|| {
                let rt = Runtime::thread_per_task();
                drop(IslandProcessor::<u8, u8>::new(|f| f, 0, &rt));
            }),
        ),
        (
            "Runtime::with_threads(0)",
            Box::new(|| drop(Runtime::with_threads(0))),
        ),
        (
            "LanesConfig::new(0)",
            Box::new(|| drop(LanesConfig::<u8>::new(0))),
        ),
        (
            "LanesConfig::capacity(0)",
            Box::new(|| drop(LanesConfig::<u8>::new(2).capacity(0))),
        ),
        (
            "LanesConfig::output(0)",
            Box::new(|| drop(LanesConfig::<u8>::new(2).output(0))),
        ),
        (
            "MergeConfig::prefetch(0)",
            Box::new(|| {
                let _ = MergeConfig::new().prefetch(0);
            }),
        ),
        (
            "MergeConfig::max_concurrency(0)",
            Box::new(|| {
                let _ = MergeConfig::new().max_concurrency(0);
            }),
        ),
        (
            "merge::observe_on(_, _, 0)",
            Box::new(|| {
                let rt = Runtime::thread_per_task();
                drop(observe_on(source::range(0u8..3), &rt, 0));
            }),
        ),
        (
            "Flow::observe_on(_, 0)",
            Box::new(|| {
                let rt = Runtime::thread_per_task();
                drop(Flow::from_iter(0u8..3).observe_on(&rt, 0));
            }),
        ),
        (
            "Flow::flat_map(_, 0, _)",
            Box::new(|| drop(Flow::from_iter(0u8..3).flat_map(source::just, 0, 4))),
        ),
        (
            "Flow::flat_map(_, _, 0)",
            Box::new(|| drop(Flow::from_iter(0u8..3).flat_map(source::just, 4, 0))),
        ),
        (
            "Flow::concat_map(_, 0)",
            Box::new(|| drop(Flow::from_iter(0u8..3).concat_map(source::just, 0))),
        ),
    ]
}

#[test]
fn a_size_of_zero_panics_everywhere_with_a_message_that_says_so() {
    for (name, make) in zero_sized() {
        let outcome = catch_unwind(AssertUnwindSafe(make));
        let payload = match outcome {
            Ok(()) => panic!("{name} accepted a size of 0 (the size rule says it panics)"),
            Err(payload) => payload,
        };
        let message = rs_impl::panics::panic_message(&*payload);
        assert!(
            message.contains('0') || message.contains("at least one"),
            "{name} panicked without saying the size was the problem: {message:?}"
        );
    }
}

#[test]
fn a_size_of_one_is_accepted_everywhere() {
    // The same constructors at 1 build (so the rule above is about 0, not about small sizes).
    drop(fanout::channel::<u8>(1));
    drop(FanoutProcessor::<u8>::new(1));
    drop(IdentityProcessor::<u8>::new(1));
    drop(collect::<u8>(RequestStrategy::Prefetch(1)));
    drop(stream_subscriber::<u8>(1));
    drop(external::<u8>(1));
    drop(BoundarySubscriber::<u8>::new(1));
    assert_eq!(BoundaryConfig::new().size(1).ring_size(), 2);
    let (tx, p) = source::push::<u8>(1);
    drop((tx, p));
    let items: Vec<u8> = blocking_iter(&source::range(0u8..3), 1)
        .map(Result::unwrap)
        .collect();
    assert_eq!(items, vec![0, 1, 2]);
}

#[test]
fn the_push_source_is_the_exception_a_capacity_of_zero_waits_for_demand() {
    let (tx, p) = source::push::<u8>(0);
    let (s, result) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(s));
    let producer = std::thread::spawn(move || {
        for i in 0..5 {
            tx.blocking_send(i).unwrap();
        }
        tx.complete();
    });
    producer.join().unwrap();
    assert_eq!(result.wait().unwrap(), vec![0, 1, 2, 3, 4]);
}
