//! Islands: the mailbox and the park, on a one-stage island (an iterator source feeding the
//! sink that serves the probe), polled by `loom::future::block_on` on the main thread.

use rs_impl::island::stages::IterSource;
use rs_impl::island::{GraphBuilder, Island, SubscriberSink};
use rs_impl::loom::thread;

use crate::probe::{Behaviour, Probe, Record};

/// How the mailbox is broken in a broken twin.
#[derive(Clone, Copy)]
pub(crate) enum Mailbox {
    Sound,
    /// The island parks without re-checking for mail after registering its waker.
    ParksBlind,
    /// A post neither notifies nor wakes the island.
    PostsSilently,
    /// The island clears a stage's queued flag with a plain store: a poster that found the
    /// flag set relies on a handler that may not see its event (the lost cancel the model
    /// `island_cancel_ends_a_parked_island` found in the first version).
    ClearsWithStore,
}

fn one_stage_island(n: u64, probe: Probe, mailbox: Mailbox) -> Island {
    let mut g = GraphBuilder::new();
    let (o, i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..n));
    g.add_stage(SubscriberSink::new(i, Box::new(probe)));
    let island = Island::new(g.build().expect("two stages, one connection"));
    match mailbox {
        Mailbox::Sound => {}
        Mailbox::ParksBlind => island.break_mailbox_for_loom(true, false, false),
        Mailbox::PostsSilently => island.break_mailbox_for_loom(false, true, false),
        Mailbox::ClearsWithStore => island.break_mailbox_for_loom(false, false, true),
    }
    island
}

/// Rules 3.4 and 1.1, no lost wake-up. Interpreting: the island runs `on_subscribe` (no
/// request) and parks; thread A requests 2 — racing the park: before the waker is registered,
/// between the registration and the `RUNNING → IDLE` exchange, or after it. In every
/// interleaving the island wakes, delivers the one element, completes (the second demanded
/// element finds the end), and `block_on` returns; the subscriber is dropped (3.13). A lost
/// wake-up shows as a deadlock.
pub(crate) fn request_races_park(mailbox: Mailbox) {
    let record = Record::new();
    let (probe, token) = Probe::new(
        &record,
        Behaviour {
            initial: 0,
            reentrant: None,
        },
    );
    let island = one_stage_island(1, probe, mailbox);
    let a = {
        let record = record.clone();
        thread::spawn(move || record.wait_subscription().request(2))
    };
    loom::future::block_on(island);
    a.join().unwrap();
    let summary = record.finish();
    assert_eq!(
        summary.received, 1,
        "rule 1.1: the element was not delivered"
    );
    assert_eq!(summary.completes, 1, "rule 1.5: no completion");
    assert!(
        token.upgrade().is_none(),
        "rule 3.13: the subscriber is kept"
    );
}

/// Rules 1.7, 1.8, 3.5–3.7, 3.12, 3.13. The probe requests `initial` from `on_subscribe`;
/// thread A cancels, racing the island's emission and completion. With `n = 1, initial = 2`
/// the completion races the cancel; with `n = 2, initial = 1` only the cancel can end the
/// island (it parks for demand first). In every interleaving: `block_on` returns (the cancel
/// was not lost), at most one terminal signal and at most `initial` elements arrive, a
/// request after everything is a no-op, and the subscriber is dropped.
pub(crate) fn cancel_races_completion(n: u64, initial: u64, mailbox: Mailbox) {
    let record = Record::new();
    let (probe, token) = Probe::new(
        &record,
        Behaviour {
            initial,
            reentrant: None,
        },
    );
    let island = one_stage_island(n, probe, mailbox);
    let a = {
        let record = record.clone();
        thread::spawn(move || record.wait_subscription().cancel())
    };
    loom::future::block_on(island);
    a.join().unwrap();
    let s = record.wait_subscription();
    let before = record.received();
    s.request(1);
    assert_eq!(
        record.received(),
        before,
        "rule 3.6: a request after the end delivered"
    );
    drop(s);
    let summary = record.finish();
    assert!(summary.received <= initial.min(n), "rule 1.1");
    assert!(
        token.upgrade().is_none(),
        "rule 3.13: the subscriber is kept"
    );
}

#[test]
fn island_request_races_park() {
    loom::model(|| request_races_park(Mailbox::Sound));
}

#[test]
fn island_cancel_races_completion() {
    loom::model(|| cancel_races_completion(1, 2, Mailbox::Sound));
}

#[test]
fn island_cancel_ends_a_parked_island() {
    loom::model(|| cancel_races_completion(2, 1, Mailbox::Sound));
}

crate::loom_rejects!(
    island_model_rejects_a_park_without_the_recheck,
    "deadlock",
    || request_races_park(Mailbox::ParksBlind)
);

crate::loom_rejects!(
    island_model_rejects_a_post_that_does_not_wake,
    "deadlock",
    || cancel_races_completion(2, 1, Mailbox::PostsSilently)
);

crate::loom_rejects!(
    island_model_rejects_a_queued_flag_cleared_with_a_store,
    "deadlock",
    || cancel_races_completion(2, 1, Mailbox::ClearsWithStore)
);
