//! The registry: every implementation of this workspace with the verifications it passes. One
//! file per area, each with `suites()` (what the runner binary runs) and `loom_suites()` (the
//! loom mode over the same verification values, run by `tck/tests/loom.rs`, which includes
//! this module). To register an implementation, add it to the file of its area, or add a file
//! and list it in [`all`] and [`loom`].
//!
//! | file | implementations | verifications |
//! |---|---|---|
//! | [`sources`] | `source::range`, `source::from_iter`, `source::from_fn`, `source::from_pull`, `source::empty` | publisher |
//! | [`subscribers`] | `subscriber::collect(Unbounded)`, `(Prefetch(8))`, `(OneByOne)`, `subscriber::for_each(Prefetch(4))` | subscriber whitebox, blackbox |
//! | [`processors`] | `processor::IdentityProcessor` | identity processor |
//! | [`fanout`] | `fanout::channel`, `fanout::channel_with(grow_from(2))` (a buffer that grows), `fanout::FanoutProcessor` | publisher (multicast declared: every 1.11 test required, buffer growth included), identity processor |
//! | `islands` (not in a loom build) | `island::Flow` publishers, `island::IslandProcessor(identity)` and its input side | publisher (bounded buffering on the flow built on a publisher), identity processor, subscriber whitebox, blackbox |
//! | `boundary` (not in a loom build) | flows with `async_boundary()` (batched, unbatched, two boundaries), `IslandProcessor(async_boundary)`, `boundary::BoundarySubscriber` | publisher (bounded buffering on the flow built on a publisher), identity processor, subscriber whitebox, blackbox |
//! | [`examples`] | `rs-impl/examples/`: `repeat` (the `serial` module's example), `thread_publisher` (signals from a thread of its own) | publisher |
//! | `rsocket` (not in a loom build) | `rsocket::Client::request_stream` of a remote range over loopback | publisher |
//! | [`compat`] | `compat::from_stream`, `compat::from_stream_fn`, `source::push(0)`, `compat::to_stream → from_try_stream`; `compat::to_stream(8)`, `(1)`; `compat::sink_subscriber`, `compat::from_async` | publisher; stream bridge; subscriber whitebox, blackbox, sink subscriber, async callback |
//! | `lanes` (not in a loom build) | `Flow::lanes(4, identity)`: keyed lanes merged back | publisher, identity processor |
//! | [`merge`] | `merge::merge`, `flat_map` (iterators, subscribed), `concat_map`; `observe_on`, `Flow::flat_map`, `Flow::observe_on` (not in a loom build) | publisher (loom for the plain ones); `Flow::flat_map(identity)`: identity processor |
//!
//! The runner does not run the loom suites: they mean something only in a build with
//! `--cfg rs_loom` (`scripts/loom.sh` runs `tck/tests/loom.rs` so).

#[cfg(not(rs_loom))]
mod boundary;
mod compat;
mod examples;
mod fanout;
#[cfg(not(rs_loom))]
mod islands;
#[cfg(not(rs_loom))]
mod lanes;
mod merge;
mod processors;
#[cfg(all(feature = "rsocket", not(rs_loom)))]
mod rsocket;
mod sources;
mod subscribers;

use rs_tck::suite::Suite;

/// The built-in implementations that fail a check because of a bug in rs-impl: `(implementation,
/// verification, test, the bug)`. The checks are not weakened: each is reported as skipped with
/// "KNOWN FAILURE" and the bug while it fails, and as failed once it passes (the mark is then
/// stale: remove it with the fix). [`all`] applies them.
pub(crate) const KNOWN_FAILURES: &[(&str, &str, &str, &str)] = &[];

/// Every registered suite, in table order, with [`KNOWN_FAILURES`] marked.
pub(crate) fn all() -> Vec<Suite> {
    unmarked()
        .into_iter()
        .map(|mut suite| {
            for (implementation, verification, test, bug) in KNOWN_FAILURES {
                if suite.implementation == *implementation && suite.verification == *verification {
                    suite = suite.known_failure(test, bug);
                }
            }
            suite
        })
        .collect()
}

/// Every registered suite, in table order.
fn unmarked() -> Vec<Suite> {
    #[cfg_attr(rs_loom, allow(unused_mut))] // the island entries are not in the loom build
    let mut suites = vec![
        sources::suites(),
        subscribers::suites(),
        processors::suites(),
        examples::suites(),
        fanout::suites(),
        compat::suites(),
        merge::suites(),
    ];
    #[cfg(not(rs_loom))]
    suites.push(islands::suites());
    #[cfg(not(rs_loom))]
    suites.push(boundary::suites());
    #[cfg(not(rs_loom))]
    suites.push(lanes::suites());
    #[cfg(all(feature = "rsocket", not(rs_loom)))]
    suites.push(rsocket::suites());
    suites.concat()
}

/// Every registered loom suite, in table order.
#[allow(dead_code)] // the binary does not run them; tck/tests/loom.rs does
pub(crate) fn loom() -> Vec<Suite> {
    [
        sources::loom_suites(),
        subscribers::loom_suites(),
        processors::loom_suites(),
        examples::loom_suites(),
        fanout::loom_suites(),
        compat::loom_suites(),
        merge::loom_suites(),
    ]
    .concat()
}
