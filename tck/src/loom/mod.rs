//! Loom mode of the TCK: the concurrency rules, checked in every interleaving.
//!
//! The JVM TCK samples rule 1.3 over 100 runs and cannot observe happens-before at all; it
//! never checks cancel racing emission, terminal signals racing an element in flight, or two
//! `on_subscribe` calls racing (its 2.5 stress test was abandoned: reactive-streams-jvm #427,
//! #428). These scenarios run those races inside
//! a loom model, which — in a build with `RUSTFLAGS="--cfg rs_loom"` — explores every
//! interleaving of the threads involved with at most [`DEFAULT_PREEMPTION_BOUND`] (2)
//! preemptions each, or `LOOM_MAX_PREEMPTIONS` when that is set. The scenarios set the bound
//! themselves: loom's own default is no bound, under which a scenario with a publisher thread
//! runs for many minutes. The other `LOOM_*` variables apply as loom documents them.
//!
//! # The same factory as the ordinary verifications
//!
//! The loom mode is three more verifications over the *same* hooks: a user writes the factory
//! once.
//!
//! | function | takes | verification name | scenarios |
//! |---|---|---|---|
//! | [`verify_publisher`] | a [`PublisherVerification`] | `loom_publisher` | the five publisher scenarios |
//! | [`verify_subscriber`] | a [`SubscriberBlackboxVerification`] | `loom_subscriber` | the 2.5 scenario |
//! | [`verify_processor`] | an [`IdentityProcessorVerification`] | `loom_processor` | the five publisher scenarios on the processor fed by a helper publisher (a buffer of [`PROCESSOR_BUFFER_SIZE`], so it refills within the scenario), and the 2.5 scenario on the processor as a subscriber (on two clones of it); each under a name of its own, `processor_` after the rule (`required_spec103_processor_concurrent_request_vs_emission`, …, `required_spec205_processor_racing_on_subscribe`) |
//!
//! Each returns a [`Suite`]: one `cargo test` test per scenario, named after its rules, through
//! [`tck_main!`](crate::tck_main). The suites are [isolated](Suite::isolated): under the
//! `cargo test` harness every scenario runs in a child process of its own, because a failure
//! that loom finds while other model threads are suspended aborts the process; the aborted
//! scenario is reported as failed with its output, and the others' results stay intact.
//!
//! A publisher scenario that needs more elements than
//! [`max_elements_from_publisher`](PublisherVerification::max_elements_from_publisher), or
//! `on_complete` from a publisher that cannot signal it, is skipped with the reason, as in the
//! ordinary verification.
//!
//! # What your implementation needs
//!
//! In your crate, tell the compiler about the `rs_loom` cfg, or every `#[cfg(rs_loom)]` warns
//! (`unexpected cfg condition name: rs_loom`):
//!
//! ```toml
//! # Cargo.toml
//! [lints.rust]
//! unexpected_cfgs = { level = "warn", check-cfg = ["cfg(rs_loom)"] }
//! ```
//!
//! Build it on `rs-impl`'s facade ([`rs_impl::loom`]: its atomics, mutexes, `Arc`, threads), or
//! on loom's types directly under `cfg(rs_loom)`, so that loom sees its synchronisation. Code
//! on plain `std` locks and atomics still runs, but loom cannot explore or check what it does
//! not see. A publisher that signals from a plain `std::thread` (or a thread pool's) is
//! detected — every model thread runs on the thread that called the model — and the scenario
//! fails saying so ("the publisher called on_subscribe from a thread loom does not know …"),
//! not with the deadlock that follows ("rule 1.9: the publisher never called on_subscribe"). A
//! model thread that blocks on a plain `std` lock (held by another model thread), condvar or
//! channel blocks the one OS thread all model threads run on, so loom can neither go on nor
//! report a deadlock: a watchdog notices that no interleaving began for
//! [`STALL_SECS_VAR`] seconds (default [`DEFAULT_STALL_SECS`]) and ends the scenario's
//! process, and the failure opens with `stalled: no interleaving began for 60 s: a model
//! thread is blocked on something loom cannot see (a std mutex, …)`. In a
//! normal build each scenario runs once with std types (a smoke test; a wait that lasts more
//! than 10 s fails naming the rule it waited for). The factory is called inside the model
//! (loom's types can only be created there), once per interleaving.
//!
//! A publisher that signals from a **thread of its own** runs the same scenarios: spawn it with
//! [`rs_impl::loom::thread::spawn`], and let it end once the subscription is over (cancelled or
//! terminated) — loom requires every thread to finish, so a thread left waiting forever is
//! reported as a deadlock. `rs-impl/examples/thread_publisher.rs` is such a publisher (all five
//! scenarios in about 10 s on a 2-core machine, with the default bound). A cloneable subscriber
//! (a handle over shared state) should also implement
//! [`create_cloneable_subscriber`](SubscriberBlackboxVerification::create_cloneable_subscriber),
//! so that the 2.5 scenario races its clones.
//!
//! # The scenarios
//!
//! Publisher scenarios call `create_publisher(n)` for `n` = 2 or 3; the subscriber scenario calls
//! `create_subscriber()`.
//!
//! | scenario (test name) | rules | interleaving |
//! |---|---|---|
//! | `required_spec103_concurrent_request_vs_emission` | 1.3, 1.1, 3.8 | 3 elements; the probe requests 1 from `on_subscribe` (so the subscribing thread starts emitting) while two other threads request 1 each. In every interleaving: signals never overlap and each happens-before the next (1.3), never more elements than requested (1.1), all 3 arrive (no request lost, 3.8) |
//! | `required_spec303_reentrant_and_concurrent_request` | 3.3, 3.2, 1.3 | 3 elements; the probe requests 1 from `on_subscribe` and 1 more re-entrantly from inside the first `on_next`, while another thread requests 1: the re-entrant request does not recurse into `on_next` (the in-signal flag catches nesting as an overlap), and all 3 elements arrive |
//! | `required_spec107_complete_racing_on_next` | 1.7, 1.6, 3.13 | 2 elements; the probe requests 1 from `on_subscribe`, then the subscribing thread and another thread request 1 each at once, so the last `on_next` and the `on_complete` race a request: both elements, exactly one `on_complete`, nothing after it, the subscriber dropped |
//! | `required_spec107_error_racing_on_next` | 1.7, 3.9 | 3 elements; the probe requests 1 from `on_subscribe` and 1 re-entrantly from the first `on_next`, while another thread calls `request(0)`, so the rule 3.9 `on_error` races the elements in flight: exactly one `on_error`, naming rule 3.9, no `on_complete`, nothing after the error, at most 2 elements |
//! | `required_spec312_cancel_racing_emission` | 3.5–3.7, 3.12, 3.13, 1.8 | 3 elements; the probe requests 1 from `on_subscribe` while one thread cancels and another requests 1 and then cancels too; then `request(1)` and `cancel()` once more, after both cancels returned: at most the 2 elements requested before (a third one breaks 3.6: the late request added demand), no terminal signal, the extra calls are no-ops (3.6, 3.7), and the publisher drops the subscriber (3.13) |
//! | `required_spec205_racing_on_subscribe` | 2.5 | two threads — two publishers, say — call `on_subscribe` with their own subscription at once, in either order: on two clones of the subscriber when the verification gives a cloneable one ([`create_cloneable_subscriber`](SubscriberBlackboxVerification::create_cloneable_subscriber)), otherwise on the one subscriber behind a lock (`on_subscribe` takes `&mut self`). Then, as the blackbox verification does, the verification's [`trigger_request`](SubscriberBlackboxVerification::trigger_request) nudges it (on the cloneable subscriber when there is one), so a subscriber that requests only when told to passes. Exactly one subscription is kept (requested from, not cancelled), the other is cancelled and never requested from |
//!
//! In every publisher scenario the probe books each `request` before it is made, from every
//! thread, and checks each `on_next` against the demand booked so far (1.1). Each scenario uses
//! at most 3 threads of its own, plus the publisher's, so a run with the default bound takes
//! seconds.
//!
//! # How a failure reads
//!
//! The probe subscriber never panics inside a signal (publishers may catch subscriber panics,
//! rule 2.13); it records violations and the scenario asserts at the end of each interleaving,
//! with a message that opens with the rule that was broken, e.g. `rule 1.3: on_next overlaps
//! another signal`, or `rule 3.6: on_next #3, but only 2 elements were requested before cancel`
//! (not 1.1: the scenario knows which requests came after the cancel). Other failures come from
//! loom itself: a *deadlock* means that something the scenario waits for never came in that
//! interleaving, and the failure says what, with its rule (an element, 3.8; the terminal
//! signal, 1.5 or 3.9; the publisher dropping the subscriber after cancel, 3.13):
//! `deadlocked while waiting: rule 3.8: only some of the 3 elements requested arrived …`
//! ([`DEADLOCKED`]). When the
//! failure aborts the process (a deadlock while other model threads are suspended, a panic in a
//! destructor), the scenario notes what never happened, and the violation, on lines of their
//! own ([`NOTE_PREFIX`](crate::harness::NOTE_PREFIX)), and the harness puts them first in the
//! failure, ahead of the end of the output (which can be long: loom's thread dump). *Arc
//! leaked* means a loom `Arc`
//! outlived the interleaving (often a subscriber that was never dropped). Rerun a failing
//! scenario with `LOOM_LOG=trace LOOM_LOCATION=1 LOOM_MAX_PREEMPTIONS=2` to see the
//! interleaving (the trace needs `LOOM_MAX_PREEMPTIONS` set).
//!
//! # Examples
//!
//! In `tests/loom.rs` of your crate (run with
//! `RUSTFLAGS="--cfg rs_loom" cargo test --release --test loom`), with the verifications your
//! ordinary TCK target uses:
//!
//! ```no_run
//! use rs_api::{Publisher, Subscriber};
//! use rs_impl::subscriber::{collect, RequestStrategy};
//! use rs_tck::publisher::PublisherVerification;
//! use rs_tck::subscriber::SubscriberBlackboxVerification;
//!
//! struct Range;
//! impl PublisherVerification for Range {
//!     type Item = u64;
//!     fn create_publisher(&self, n: u64) -> impl Publisher<u64> + Send + 'static {
//!         rs_impl::source::range(0..n)
//!     }
//! }
//!
//! struct Collect;
//! impl SubscriberBlackboxVerification for Collect {
//!     type Item = u64;
//!     fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
//!         let (s, handle) = collect(RequestStrategy::Prefetch(2));
//!         handle.detach(); // nobody waits for the outcome (dropping the handle cancels)
//!         s
//!     }
//!     fn create_element(&self, i: u64) -> u64 { i }
//! }
//!
//! rs_tck::tck_main!(
//!     rs_tck::loom::verify_publisher("range", Range),
//!     rs_tck::loom::verify_subscriber("collect", Collect),
//! );
//! ```
//!
//! A single scenario runs like any other test:
//!
//! ```
//! # use rs_api::Publisher;
//! # use rs_tck::publisher::PublisherVerification;
//! # struct Range;
//! # impl PublisherVerification for Range {
//! #     type Item = u64;
//! #     fn create_publisher(&self, n: u64) -> impl Publisher<u64> + Send + 'static {
//! #         rs_impl::source::range(0..n)
//! #     }
//! # }
//! let suite = rs_tck::loom::verify_publisher("range", Range);
//! assert_eq!(suite.tests.len(), 5);
//! let t = suite.test("required_spec312_cancel_racing_emission").unwrap();
//! assert_eq!(t.run().outcome, rs_tck::outcome::Outcome::Passed);
//! ```
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod record;
mod scenarios;

pub use record::{DEFAULT_STALL_SECS, STALL_SECS_VAR};

use std::sync::Arc;

use crate::env::Timeouts;
use crate::processor::{AsBlackbox, AsPublisher, IdentityProcessorVerification};
use crate::publisher::PublisherVerification;
use crate::subscriber::SubscriberBlackboxVerification;
use crate::suite::{specs, Suite, TestSpec};

/// How a scenario's failure opens when loom found a deadlock: then what the scenario was
/// waiting for, phrased as the failure if it never comes (it names the rule), e.g.
/// `deadlocked while waiting: rule 3.8: only some of the 3 elements requested arrived …`.
/// When the deadlock aborts the process, the harness still puts this line first.
pub const DEADLOCKED: &str = "deadlocked while waiting: ";

/// Whether a scenario's failure `detail` opens with its cause, which names the rule when
/// there is one: what a deadlock never brought ([`DEADLOCKED`]), or a signal from a thread
/// loom does not know (no rule is broken: the scenario cannot check the publisher). The
/// harness then shows it without the scenario's rule in front.
pub(crate) fn opens_with_its_cause(detail: &str) -> bool {
    detail.starts_with(DEADLOCKED)
        || detail.starts_with(record::STALLED)
        || record::opens_with_a_foreign_thread(detail)
}

/// The verification name of [`verify_publisher`]'s suite.
pub const PUBLISHER: &str = "loom_publisher";

/// The verification name of [`verify_subscriber`]'s suite.
pub const SUBSCRIBER: &str = "loom_subscriber";

/// The verification name of [`verify_processor`]'s suite.
pub const PROCESSOR: &str = "loom_processor";

/// The buffer size the processor scenarios ask
/// [`create_identity_processor`](IdentityProcessorVerification::create_identity_processor)
/// for: smaller than the scenarios' 3 elements, so the processor refills its buffer while
/// they run.
pub const PROCESSOR_BUFFER_SIZE: usize = 2;

/// The preemption bound of every scenario when `LOOM_MAX_PREEMPTIONS` is unset: 2, the bound
/// tokio and crossbeam use (loom's own default is no bound, which takes minutes to hours). With
/// it, every scenario of a publisher built on `rs-impl`'s blocks takes seconds.
pub const DEFAULT_PREEMPTION_BOUND: usize = 2;

/// The subject of the loom scenarios: the user's verification, shared with every model run.
pub(crate) struct Subject<V>(pub(crate) Arc<V>);

/// The five publisher scenarios over `verification`'s `create_publisher`, reported under
/// `implementation` as verification [`PUBLISHER`]; isolated (see the [module docs](self)).
///
/// # Examples
///
/// See the [module docs](self).
pub fn verify_publisher<V: PublisherVerification>(
    implementation: impl Into<String>,
    verification: V,
) -> Suite {
    publisher_suite(implementation.into(), PUBLISHER, Arc::new(verification))
}

/// The rule 2.5 scenario over `verification`'s `create_subscriber`, reported under
/// `implementation` as verification [`SUBSCRIBER`]; isolated.
///
/// # Examples
///
/// ```
/// use rs_api::Subscriber;
/// use rs_impl::subscriber::{for_each, RequestStrategy};
/// use rs_tck::subscriber::SubscriberBlackboxVerification;
///
/// struct ForEach;
/// impl SubscriberBlackboxVerification for ForEach {
///     type Item = u8;
///     fn create_subscriber(&self) -> impl Subscriber<u8> + 'static {
///         let (s, handle) = for_each(RequestStrategy::Unbounded, |_| {});
///         handle.detach(); // nobody waits for the outcome (dropping the handle cancels)
///         s
///     }
///     fn create_element(&self, i: u64) -> u8 { i as u8 }
/// }
/// let suite = rs_tck::loom::verify_subscriber("for_each", ForEach);
/// assert_eq!(suite.tests[0].run().outcome, rs_tck::outcome::Outcome::Passed);
/// ```
pub fn verify_subscriber<V: SubscriberBlackboxVerification>(
    implementation: impl Into<String>,
    verification: V,
) -> Suite {
    subscriber_suite(implementation.into(), SUBSCRIBER, Arc::new(verification))
}

/// The five publisher scenarios on processors from `verification`'s
/// `create_identity_processor(`[`PROCESSOR_BUFFER_SIZE`]`)`, each fed by a helper publisher of
/// `create_element`s, and the rule 2.5 scenario on the processor as a subscriber; reported
/// under `implementation` as verification [`PROCESSOR`]; isolated.
///
/// # Examples
///
/// ```
/// use rs_api::Processor;
/// use rs_impl::processor::IdentityProcessor;
/// use rs_tck::processor::IdentityProcessorVerification;
///
/// struct Identity;
/// impl IdentityProcessorVerification for Identity {
///     type Item = u64;
///     fn create_identity_processor(&self, n: usize) -> impl Processor<u64, u64> + Clone + Send + 'static {
///         IdentityProcessor::new(n)
///     }
///     fn create_element(&self, i: u64) -> u64 { i }
/// }
/// let suite = rs_tck::loom::verify_processor("identity", Identity);
/// assert_eq!(suite.tests.len(), 6);
/// ```
pub fn verify_processor<V: IdentityProcessorVerification>(
    implementation: impl Into<String>,
    verification: V,
) -> Suite {
    let implementation = implementation.into();
    let v = Arc::new(verification);
    let as_publisher = Arc::new(AsPublisher::with_buffer(v.clone(), PROCESSOR_BUFFER_SIZE));
    let as_subscriber = Arc::new(AsBlackbox {
        v,
        buffer: PROCESSOR_BUFFER_SIZE,
    });
    let p = suite(
        implementation.clone(),
        PROCESSOR,
        as_publisher,
        processor_publisher_specs(),
    );
    let s = suite(
        implementation.clone(),
        PROCESSOR,
        as_subscriber,
        processor_subscriber_specs(),
    );
    Suite {
        implementation,
        verification: PROCESSOR,
        tests: [p.tests, s.tests].concat(),
    }
}

fn publisher_suite<V: PublisherVerification>(
    implementation: String,
    verification: &'static str,
    v: Arc<V>,
) -> Suite {
    suite(implementation, verification, v, publisher_specs::<V>())
}

fn subscriber_suite<V: SubscriberBlackboxVerification>(
    implementation: String,
    verification: &'static str,
    v: Arc<V>,
) -> Suite {
    suite(implementation, verification, v, subscriber_specs::<V>())
}

/// The isolated suite of `specs` over `v` (loom does not model time: no timeouts apply).
fn suite<V: Send + Sync + 'static>(
    implementation: String,
    verification: &'static str,
    v: Arc<V>,
    specs: Vec<TestSpec<Subject<V>>>,
) -> Suite {
    Suite::new(
        implementation,
        verification,
        Timeouts::default(),
        Subject(v),
        specs,
    )
    .isolated()
}

/// The publisher scenarios (no JVM counterpart: the JVM name is empty).
fn publisher_specs<V: PublisherVerification>() -> Vec<TestSpec<Subject<V>>> {
    specs![V, scenarios:
        required_spec103_concurrent_request_vs_emission, "", "1.3",
            "are signals sent from one drain loop whose work counter uses Acquire/Release (happens-before between signals on different threads), and does a request made while another thread drains get served?";
        required_spec303_reentrant_and_concurrent_request, "", "3.3",
            "is a re-entrant request recorded for the drain loop already running instead of recursing into on_next, and is a concurrent one not lost?";
        required_spec107_complete_racing_on_next, "", "1.7",
            "is on_complete sent exactly once, after the last element, with nothing after it, and is the subscriber dropped then, whichever thread drains?";
        required_spec107_error_racing_on_next, "", "1.7",
            "does request(0) racing emission end in exactly one on_error naming rule 3.9, with nothing after it and no more elements than requested?";
        required_spec312_cancel_racing_emission, "", "3.12",
            "after cancel (from any thread, twice), does emission stop, do later request and cancel calls do nothing, and is the subscriber dropped, in every interleaving?";
    ]
}

/// The publisher scenarios on a processor: the same bodies and hints, each name with
/// `processor_` after its rule.
fn processor_publisher_specs<V: PublisherVerification>() -> Vec<TestSpec<Subject<V>>> {
    let hints: Vec<&'static str> = publisher_specs::<V>().iter().map(|t| t.hint).collect();
    let mut specs = specs![V, scenarios:
        required_spec103_processor_concurrent_request_vs_emission, "", "1.3", "";
        required_spec303_processor_reentrant_and_concurrent_request, "", "3.3", "";
        required_spec107_processor_complete_racing_on_next, "", "1.7", "";
        required_spec107_processor_error_racing_on_next, "", "1.7", "";
        required_spec312_processor_cancel_racing_emission, "", "3.12", "";
    ];
    for (spec, hint) in specs.iter_mut().zip(hints) {
        spec.hint = hint;
    }
    specs
}

/// The subscriber scenario on a processor.
fn processor_subscriber_specs<V: SubscriberBlackboxVerification>() -> Vec<TestSpec<Subject<V>>> {
    let mut specs = specs![V, scenarios:
        required_spec205_processor_racing_on_subscribe, "", "2.5", "";
    ];
    specs[0].hint = subscriber_specs::<V>()[0].hint;
    specs
}

/// The subscriber scenario.
fn subscriber_specs<V: SubscriberBlackboxVerification>() -> Vec<TestSpec<Subject<V>>> {
    specs![V, scenarios:
        required_spec205_racing_on_subscribe, "", "2.5",
            "does on_subscribe keep exactly one subscription and cancel the other when two threads call it at once (the check and the set must be one atomic step: one lock or a compare_exchange)?";
    ]
}
