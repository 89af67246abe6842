//! Completion and error racing an in-flight `on_next`.

use rs_api::Publisher;
use rs_impl::loom::thread;
use rs_impl::source;

use crate::broken::{BrokenSource, Bug};
use crate::probe::{Behaviour, Probe, Record};

/// Rules 1.7 and 1.6 (completion). Interleaving: two elements; the probe requests 1 from
/// `on_subscribe`, then the main thread and thread A each request 1 at once, so the last
/// `on_next` and the `on_complete` that the source sends as soon as it knows the end are
/// delivered by either thread while the other one's request arrives. In every interleaving:
/// both elements, then exactly one `on_complete`, nothing after it, and the subscriber dropped.
pub(crate) fn complete_racing_on_next<P: Publisher<u64>>(make: fn() -> P) {
    let record = Record::new();
    let (probe, token) = Probe::new(
        &record,
        Behaviour {
            initial: 1,
            reentrant: None,
        },
    );
    let a = {
        let record = record.clone();
        thread::spawn(move || record.wait_subscription().request(1))
    };
    make().subscribe(Box::new(probe));
    record.wait_subscription().request(1);
    a.join().unwrap();
    let summary = record.finish();
    assert_eq!(summary.received, 2, "rule 1.1/1.2: expected both elements");
    assert_eq!(
        summary.completes, 1,
        "rule 1.7: expected exactly one on_complete"
    );
    assert!(
        token.upgrade().is_none(),
        "rule 1.6/3.13: subscriber kept after on_complete"
    );
}

/// Rules 1.7 and 3.9 (error). Interleaving: three elements; the probe requests 1 from
/// `on_subscribe` and 1 more re-entrantly from `on_next(0)`, while thread A calls `request(0)`
/// — so the rule 3.9 `on_error` races the in-flight `on_next` calls. In every interleaving:
/// exactly one `on_error` naming rule 3.9, no `on_complete`, nothing after the error, at most
/// the 2 requested elements, and the subscriber dropped.
pub(crate) fn error_racing_on_next<P: Publisher<u64>>(make: fn() -> P) {
    let record = Record::new();
    let (probe, token) = Probe::new(
        &record,
        Behaviour {
            initial: 1,
            reentrant: Some((0, 1)),
        },
    );
    let a = {
        let record = record.clone();
        thread::spawn(move || record.wait_subscription().request(0))
    };
    make().subscribe(Box::new(probe));
    a.join().unwrap();
    let summary = record.finish();
    assert_eq!(
        summary.errors, 1,
        "rule 1.7/3.9: expected exactly one on_error"
    );
    assert_eq!(
        summary.completes, 0,
        "rule 1.7: on_complete as well as on_error"
    );
    assert!(
        summary
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("3.9")),
        "rule 3.9: the error does not name the rule: {:?}",
        summary.last_error
    );
    assert!(
        summary.received <= 2,
        "rule 1.1: {} elements for 2 requested",
        summary.received
    );
    assert!(
        token.upgrade().is_none(),
        "rule 1.6/3.13: subscriber kept after on_error"
    );
}

#[test]
fn terminal_complete_racing_on_next_range() {
    loom::model(|| complete_racing_on_next(|| source::range(0u64..2)));
}

#[test]
fn terminal_error_racing_on_next_range() {
    crate::exhaustive(|| error_racing_on_next(|| source::range(0u64..3)));
}

crate::loom_rejects!(
    terminal_model_rejects_broken_source_that_signals_after_complete,
    "rule 1.7",
    || { complete_racing_on_next(|| BrokenSource::new(2, Bug::TerminalKeepsSubscriber)) }
);

crate::loom_rejects!(
    terminal_error_model_rejects_broken_source_that_signals_after_error,
    "rule 1.7",
    || { error_racing_on_next(|| BrokenSource::new(3, Bug::TerminalKeepsSubscriber)) }
);
