//! The scenarios, one module per component, each with a `scenario()`; [`all`] lists them.
//!
//! | module | scenario id | what it measures |
//! |---|---|---|
//! | [`source`] | `source` | a cold source drained into a subscriber on one thread, per element |
//! | [`interpreter`] | `interpreter` | Pekko PR #2986's InterpreterBenchmark: k identity stages in one island, against separate publisher/subscriber pairs and a futures::stream chain |
//! | [`pipeline`] | `pipeline` | a producer thread handing `u64`s to a consumer thread |
//! | [`processor`] | `processor` | one source through the identity processor to K subscribers, on one thread |
//! | [`boundary`] | `boundary` | Pekko PR #3288's AsyncBoundaryThroughputBenchmark: K identity stages each behind an async boundary, against chains of crossbeam, tokio and futures channels |
//! | [`compat`] | `to_stream`, `from_stream` | the async-Rust bridges: publisher → `Stream`, `Stream` → publisher |
//! | [`merge`] | `merge-*`, `observe-on` | seed 003's OperatorMergePerf and OperatorObserveOnPerf shapes, in ops (subscriptions run to completion), against futures, tokio-stream, tokio mpsc and crossbeam |
//! | [`fanout`] | `fanout`, `fanout-slow` | one producer, N subscribers: continuous demand and `request(1)`; one slow subscriber among fast ones |
//! | [`fanout_islands`] | `fanout-islands`, `fanout-1024` | the fanout at capacity 1024: every subscriber on an island of its own against thread-per-receiver peers; on the producer's thread against the ceiling |
//! | [`lanes`] | `lanes`, `lanes-trivial` | seed 004's keyed lanes: 0..n over K lanes (1, 2, 4, 8) with about 500 ns of work per element (and with none), merged back, against the one-island ceiling, crossbeam threads per lane and tokio tasks per lane |
//! | [`rsocket`] | `remote-ping-pong`, `request-stream` | RSocket over loopback: seed 004's RemotePingPong against a raw TCP echo; a stream of small payloads |
//!
//! To add a component's scenario (the fanout and boundary issues do), write a module with a
//! `scenario()` function and add it to [`all`]; the report, the charts, the criterion bench
//! helper and the CI smoke run pick it up. The types live in [`crate::scenario`].

use crate::scenario::Scenario;

pub mod boundary;
pub mod compat;
pub mod fanout;
pub mod fanout_islands;
pub mod interpreter;
pub mod lanes;
pub mod merge;
pub mod pipeline;
pub mod processor;
pub mod rsocket;
pub mod source;

/// Every scenario, in report order. Later components append theirs here.
///
/// # Examples
///
/// ```
/// let ids: Vec<_> = rs_benches::scenarios::all().iter().map(|s| s.id).collect();
/// assert!(ids.contains(&"source"));
/// ```
#[must_use]
pub fn all() -> Vec<Scenario> {
    vec![
        source::scenario(),
        pipeline::scenario(),
        processor::scenario(),
        fanout::scenario(),
        fanout::slow_scenario(),
        fanout_islands::islands_scenario(),
        fanout_islands::capacity_scenario(),
        interpreter::scenario(),
        compat::to_stream_scenario(),
        compat::from_stream_scenario(),
        boundary::scenario(),
        merge::one_stream_scenario(),
        merge::one_sync_scenario(),
        merge::n_sync_scenario(),
        merge::n_async_scenario(),
        merge::two_async_scenario(),
        merge::n_of_1_scenario(),
        merge::observe_on_scenario(),
        lanes::scenario(),
        lanes::trivial_scenario(),
        rsocket::ping_pong_scenario(),
        rsocket::stream_scenario(),
    ]
}

/// An implementation measured at each parameter, not lossy: the common case of the scenarios.
pub(crate) fn imp(
    name: &'static str,
    ours: bool,
    what: &'static str,
    run: fn(u64, u64) -> u64,
) -> crate::scenario::Implementation {
    crate::scenario::Implementation {
        name,
        ours,
        per_param: true,
        what,
        run,
        lossy: false,
    }
}
