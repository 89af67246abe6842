//! Cancel racing emission.

use rs_api::Publisher;
use rs_impl::loom::thread;
use rs_impl::source;

use crate::broken::{BrokenSource, Bug};
use crate::probe::{Behaviour, Probe, Record};

/// Rules 1.8, 3.12, 3.5–3.7 and 3.13. Interleaving: the main thread subscribes (the probe
/// requests 1 from `on_subscribe`, so emission starts at once on the main thread) while thread A
/// cancels and thread B requests 1 more and then cancels too — each racing the element in
/// flight and each other. In every interleaving: at most the 2 requested elements arrive, in
/// order and serially; nothing terminal is sent; once everyone is done a further `request` is a
/// no-op and a further `cancel` is harmless (3.6, 3.7); and the publisher has dropped the
/// subscriber (the probe's `Weak` token no longer upgrades, 3.13).
pub(crate) fn cancel_racing_emission<P: Publisher<u64>>(make: fn() -> P) {
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
        thread::spawn(move || record.wait_subscription().cancel())
    };
    let b = {
        let record = record.clone();
        thread::spawn(move || {
            let s = record.wait_subscription();
            s.request(1);
            s.cancel(); // 3.5: concurrently with A's
        })
    };
    make().subscribe(Box::new(probe));
    a.join().unwrap();
    b.join().unwrap();
    let s = record.wait_subscription();
    let before = record.received();
    s.request(1);
    s.cancel();
    assert_eq!(
        record.received(),
        before,
        "rule 3.6: a request after cancel delivered an element"
    );
    drop(s);
    assert!(
        token.upgrade().is_none(),
        "rule 3.13: the publisher still holds the subscriber after cancel"
    );
    let summary = record.finish();
    assert!(
        summary.received <= 2,
        "rule 1.1: {} elements for 2 requested",
        summary.received
    );
    assert_eq!(
        summary.completes + summary.errors,
        0,
        "rule 1.8: a terminal signal after cancel"
    );
}

#[test]
fn cancel_racing_emission_range() {
    loom::model(|| cancel_racing_emission(|| source::range(0u64..3)));
}

#[test]
fn cancel_racing_emission_never() {
    // `never` has nothing to emit: the race is cancel against cancel and request (3.5–3.7).
    loom::model(|| cancel_racing_emission(source::never::<u64>));
}

crate::loom_rejects!(
    cancel_model_rejects_broken_source_that_keeps_the_subscriber,
    "rule 3.13",
    || { cancel_racing_emission(|| BrokenSource::new(3, Bug::KeepsSubscriberOnCancel)) }
);
