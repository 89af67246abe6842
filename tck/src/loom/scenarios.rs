//! The bodies of the loom scenarios (the [module table](super) says what each checks). Each
//! runs one `rs_impl::loom::model`; an assertion that fails in an interleaving panics there,
//! and [`model`] turns the panic into the test's failure.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc as StdArc, Weak as StdWeak};

use rs_api::{Publisher, Subscriber};
use rs_impl::loom::sync::{Arc, Mutex};
use rs_impl::loom::thread;
use rs_impl::panics::panic_message;

use super::record::{
    explain, interleaving_began, note_deadlocks, spawn_request, watch_for_stalls, Probe, Record,
    Recording,
};
use super::{Subject, DEFAULT_PREEMPTION_BOUND};
use crate::env::TestEnvironment;
use crate::outcome::{Stop, TestResult};
use crate::publisher::{require_elements, PublisherVerification};
use crate::subscriber::SubscriberBlackboxVerification;

/// Runs `f` under loom with [`DEFAULT_PREEMPTION_BOUND`] preemptions (or
/// `LOOM_MAX_PREEMPTIONS`); a panic (a violation, or a deadlock or leak found by loom) fails the
/// test with its message, a deadlock with what the scenario was waiting for. A model blocked
/// where loom cannot see ends the process through the stall watchdog
/// ([`watch_for_stalls`]).
fn model(f: impl Fn() + Send + Sync + 'static) -> TestResult {
    note_deadlocks();
    watch_for_stalls(true);
    let result = catch_unwind(AssertUnwindSafe(|| {
        rs_impl::loom::model_with_preemption_bound(DEFAULT_PREEMPTION_BOUND, move || {
            interleaving_began();
            f()
        })
    }))
    .map_err(|p| Stop::failed(explain(panic_message(&*p))));
    watch_for_stalls(false);
    result
}

/// The frame of every publisher scenario: skips as the publisher verification does when the
/// publisher cannot produce `elements` (or `on_complete`, if `completion`); then, in every
/// interleaving, a fresh [`Record`] and [`Probe`] (requesting 1 from `on_subscribe`, and
/// `reentrant`) for `body`, which creates the publisher, drives the race and asserts.
fn publisher_scenario<V, F>(
    s: &Subject<V>,
    elements: u64,
    completion: bool,
    reentrant: Option<(u64, u64)>,
    body: F,
) -> TestResult
where
    V: PublisherVerification,
    F: Fn(&V, &Arc<Record>, Probe<V::Item>, StdWeak<()>) + Send + Sync + 'static,
{
    require_elements(&*s.0, elements, completion)?;
    let v = s.0.clone();
    model(move || {
        let record = Record::new();
        let (probe, token) = Probe::<V::Item>::new(&record, 1, reentrant);
        body(&v, &record, probe, token);
    })
}

pub(super) fn required_spec103_concurrent_request_vs_emission<V: PublisherVerification>(
    s: &Subject<V>,
    _env: &TestEnvironment,
) -> TestResult {
    requests_racing_emission(s, None, 2)
}

pub(super) fn required_spec303_reentrant_and_concurrent_request<V: PublisherVerification>(
    s: &Subject<V>,
    _env: &TestEnvironment,
) -> TestResult {
    requests_racing_emission(s, Some((1, 1)), 1)
}

/// 3 elements; the probe requests 1 from `on_subscribe` (and `reentrant`, see [`Probe`]) while
/// `threads` other threads request 1 each; all 3 must arrive, and the probe's checks hold.
fn requests_racing_emission<V: PublisherVerification>(
    s: &Subject<V>,
    reentrant: Option<(u64, u64)>,
    threads: usize,
) -> TestResult {
    publisher_scenario(s, 3, false, reentrant, move |v, record, probe, token| {
        let requesters: Vec<_> = (0..threads).map(|_| spawn_request(record, 1)).collect();
        v.create_publisher(3).subscribe(Box::new(probe));
        for r in requesters {
            r.join().expect("requesting thread");
        }
        record.await_received(3);
        record.finish(token);
    })
}

pub(super) fn required_spec107_complete_racing_on_next<V: PublisherVerification>(
    s: &Subject<V>,
    _env: &TestEnvironment,
) -> TestResult {
    publisher_scenario(s, 2, true, None, |v, record, probe, token| {
        let a = spawn_request(record, 1);
        v.create_publisher(2).subscribe(Box::new(probe));
        record.request(1);
        a.join().expect("requesting thread");
        record.await_terminal(
            "rule 1.5: no on_complete after the last of the 2 elements, with 3 requested",
        );
        let totals = record.finish(token);
        assert_eq!(
            totals.received, 2,
            "rule 1.2/1.5: expected both elements before on_complete"
        );
        assert_eq!(
            totals.completes, 1,
            "rule 1.5/1.7: expected exactly one on_complete"
        );
    })
}

pub(super) fn required_spec107_error_racing_on_next<V: PublisherVerification>(
    s: &Subject<V>,
    _env: &TestEnvironment,
) -> TestResult {
    publisher_scenario(s, 3, false, Some((1, 1)), |v, record, probe, token| {
        let a = spawn_request(record, 0);
        v.create_publisher(3).subscribe(Box::new(probe));
        a.join().expect("requesting thread");
        record.await_terminal("rule 3.9: request(0) never brought on_error");
        let totals = record.finish(token);
        assert_eq!(
            totals.errors, 1,
            "rule 3.9: request(0) must end in exactly one on_error"
        );
        assert_eq!(
            totals.completes, 0,
            "rule 1.7: on_complete as well as on_error"
        );
        let error = totals.last_error.unwrap_or_default();
        assert!(
            error.contains("3.9"),
            "rule 3.9: the error does not name the rule: {error:?}"
        );
    })
}

pub(super) fn required_spec312_cancel_racing_emission<V: PublisherVerification>(
    s: &Subject<V>,
    _env: &TestEnvironment,
) -> TestResult {
    publisher_scenario(s, 3, false, None, |v, record, probe, token| {
        let a = {
            let record = record.clone();
            thread::spawn(move || record.wait_subscription().cancel())
        };
        let b = {
            let record = record.clone();
            thread::spawn(move || {
                record.request(1);
                record.wait_subscription().cancel(); // 3.5: concurrently with the other cancel
            })
        };
        v.create_publisher(3).subscribe(Box::new(probe));
        a.join().expect("cancelling thread");
        b.join().expect("cancelling thread");
        record.request_after_cancel(1); // 3.6: a no-op
        record.wait_subscription().cancel(); // 3.7: a no-op
        let totals = record.finish(token);
        assert_eq!(
            totals.completes + totals.errors,
            0,
            "rule 1.8: a terminal signal for a cancelled subscription with 3 elements and 2 requested"
        );
    })
}

// The processor scenarios: the same bodies, under names of their own (a report then tells a
// processor's scenario from a publisher's or a subscriber's of the same rule).

pub(super) fn required_spec103_processor_concurrent_request_vs_emission<
    V: PublisherVerification,
>(
    s: &Subject<V>,
    env: &TestEnvironment,
) -> TestResult {
    required_spec103_concurrent_request_vs_emission(s, env)
}

pub(super) fn required_spec303_processor_reentrant_and_concurrent_request<
    V: PublisherVerification,
>(
    s: &Subject<V>,
    env: &TestEnvironment,
) -> TestResult {
    required_spec303_reentrant_and_concurrent_request(s, env)
}

pub(super) fn required_spec107_processor_complete_racing_on_next<V: PublisherVerification>(
    s: &Subject<V>,
    env: &TestEnvironment,
) -> TestResult {
    required_spec107_complete_racing_on_next(s, env)
}

pub(super) fn required_spec107_processor_error_racing_on_next<V: PublisherVerification>(
    s: &Subject<V>,
    env: &TestEnvironment,
) -> TestResult {
    required_spec107_error_racing_on_next(s, env)
}

pub(super) fn required_spec312_processor_cancel_racing_emission<V: PublisherVerification>(
    s: &Subject<V>,
    env: &TestEnvironment,
) -> TestResult {
    required_spec312_cancel_racing_emission(s, env)
}

pub(super) fn required_spec205_processor_racing_on_subscribe<V: SubscriberBlackboxVerification>(
    s: &Subject<V>,
    env: &TestEnvironment,
) -> TestResult {
    required_spec205_racing_on_subscribe(s, env)
}

pub(super) fn required_spec205_racing_on_subscribe<V: SubscriberBlackboxVerification>(
    s: &Subject<V>,
    _env: &TestEnvironment,
) -> TestResult {
    let v = s.0.clone();
    model(move || {
        let a = StdArc::new(Recording::default());
        let b = StdArc::new(Recording::default());
        match v.create_cloneable_subscriber() {
            // Two handles of one subscriber, each called by its own thread, as by two
            // publishers: nothing serialises the calls but the subscriber itself.
            Some(subscriber) => {
                let mut first = subscriber.clone();
                let mut second = subscriber;
                let other = {
                    let a = a.clone();
                    thread::spawn(move || {
                        Subscriber::<V::Item>::on_subscribe(&mut first, a);
                        drop(first);
                    })
                };
                Subscriber::<V::Item>::on_subscribe(&mut second, b.clone());
                other.join().expect("subscribing thread");
                // As the blackbox verification does: nudge a subscriber that requests only
                // when told to (serially with the signals: both calls have returned).
                v.trigger_request(&mut second);
                drop(second);
            }
            // One subscriber: the calls can only race behind a lock.
            None => {
                let subscriber = Arc::new(Mutex::new(v.create_subscriber()));
                let other = {
                    let subscriber = subscriber.clone();
                    let a = a.clone();
                    thread::spawn(move || {
                        Subscriber::<V::Item>::on_subscribe(&mut *subscriber.lock(), a)
                    })
                };
                Subscriber::<V::Item>::on_subscribe(&mut *subscriber.lock(), b.clone());
                other.join().expect("subscribing thread");
                v.trigger_request(&mut *subscriber.lock());
                drop(subscriber);
            }
        }
        let (sa, sb) = (a.state(), b.state());
        let kept = [sa, sb]
            .iter()
            .filter(|s| s.requested && !s.cancelled)
            .count();
        assert_eq!(
            kept, 1,
            "rule 2.5: {kept} subscriptions kept (first {sa:?}, second {sb:?}); exactly one must be"
        );
        let refused = if sa.requested && !sa.cancelled {
            sb
        } else {
            sa
        };
        assert!(
            refused.cancelled,
            "rule 2.5: the extra subscription was not cancelled"
        );
        assert!(
            !refused.requested,
            "rule 2.5: the extra subscription was requested from"
        );
    })
}
