//! Islands: the mailbox and the park, on a one-stage island (an iterator source feeding the
//! sink that serves the probe), polled by `loom::future::block_on` on the main thread.

use std::sync::Arc as StdArc;

use rs_api::{Publisher, Subscriber, Subscription};
use rs_impl::flow::IterSource;
use rs_impl::flow::{Flow, SubscriberSink};
use rs_impl::island::{GraphBuilder, Island};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use rs_impl::loom::sync::Mutex;
use rs_impl::loom::thread;

use crate::probe::{Behaviour, Probe, Record};

/// The mailbox's broken twins inject one fault each (`rs_impl::loom::Fault`) before running
/// the sound model: `MailboxPark` (the island parks without re-checking for mail after
/// registering its waker), `MailboxPost` (a post neither notifies nor wakes the island),
/// `MailboxClear` (the island clears a stage's queued flag with a plain store: a poster that
/// found the flag set relies on a handler that may not see its event — the lost cancel the
/// model `island_cancel_ends_a_parked_island` found in the first version).
fn one_stage_island(n: u64, probe: Probe) -> Island {
    let mut g = GraphBuilder::new();
    let (o, i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..n));
    g.add_stage(SubscriberSink::new(i, Box::new(probe)));
    Island::new(g.build().expect("two stages, one connection"))
}

/// Rules 3.4 and 1.1, no lost wake-up. Interpreting: the island runs `on_subscribe` (no
/// request) and parks; thread A requests 2 — racing the park: before the waker is registered,
/// between the registration and the `RUNNING → IDLE` exchange, or after it. In every
/// interleaving the island wakes, delivers the one element, completes (the second demanded
/// element finds the end), and `block_on` returns; the subscriber is dropped (3.13). A lost
/// wake-up shows as a deadlock.
pub(crate) fn request_races_park() {
    let record = Record::new();
    let (probe, token) = Probe::new(
        &record,
        Behaviour {
            initial: 0,
            reentrant: None,
        },
    );
    let island = one_stage_island(1, probe);
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
pub(crate) fn cancel_races_completion(n: u64, initial: u64) {
    let record = Record::new();
    let (probe, token) = Probe::new(
        &record,
        Behaviour {
            initial,
            reentrant: None,
        },
    );
    let island = one_stage_island(n, probe);
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
    loom::model(request_races_park);
}

#[test]
fn island_cancel_races_completion() {
    loom::model(|| cancel_races_completion(1, 2));
}

#[test]
fn island_cancel_ends_a_parked_island() {
    loom::model(|| cancel_races_completion(2, 1));
}

crate::loom_rejects!(
    island_model_rejects_a_park_without_the_recheck,
    "deadlock",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::MailboxPark);
        request_races_park()
    }
);

crate::loom_rejects!(
    island_model_rejects_a_post_that_does_not_wake,
    "deadlock",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::MailboxPost);
        cancel_races_completion(2, 1)
    }
);

crate::loom_rejects!(
    island_model_rejects_a_queued_flag_cleared_with_a_store,
    "deadlock",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::MailboxClear);
        cancel_races_completion(2, 1)
    }
);

/// An upstream whose signals come from a thread of the model; it records a `request` that
/// starts after its `on_complete` returned (rule 2.4, as the TCK's manual publisher does).
struct Driven {
    subscriber: Mutex<Option<Box<dyn Subscriber<u64>>>>,
    completed: AtomicBool,
    late_request: AtomicBool,
    requested: AtomicU64,
}

struct DrivenSub(StdArc<Driven>);

impl Subscription for DrivenSub {
    fn request(&self, n: u64) {
        if self.0.completed.load(Ordering::Acquire) {
            self.0.late_request.store(true, Ordering::Release);
        }
        self.0.requested.fetch_add(n, Ordering::AcqRel);
    }
    fn cancel(&self) {}
}

struct DrivenPublisher(StdArc<Driven>);

impl Publisher<u64> for DrivenPublisher {
    fn subscribe(&self, mut s: Box<dyn Subscriber<u64>>) {
        s.on_subscribe(StdArc::new(DrivenSub(self.0.clone())));
        *self.0.subscriber.lock() = Some(s);
    }
}

/// Rule 2.4 on the island's input side. The island (main thread) takes elements from an input
/// buffer of 2 and requests 1 after each one taken; thread A delivers the 2 requested
/// elements and `on_complete`, then marks the upstream completed — racing the island's
/// replenishing requests. In every interleaving: no request starts after `on_complete`
/// returned, every element and the completion reach the probe, and the island finishes.
pub(crate) fn input_request_races_upstream_completion() {
    let driven = StdArc::new(Driven {
        subscriber: Mutex::new(None),
        completed: AtomicBool::new(false),
        late_request: AtomicBool::new(false),
        requested: AtomicU64::new(0),
    });
    let record = Record::new();
    let (probe, _token) = Probe::new(
        &record,
        Behaviour {
            initial: 3,
            reentrant: None,
        },
    );
    let flow = Flow::from_shared_publisher(StdArc::new(DrivenPublisher(driven.clone())), 2);
    let Ok(mut island) = flow.into_island(Box::new(probe)) else {
        panic!("build")
    };
    island.start(); // subscribes upstream: the input subscriber is in `driven` now
    let a = {
        let driven = driven.clone();
        thread::spawn(move || {
            let mut s = driven.subscriber.lock().take().expect("subscribed");
            s.on_next(0);
            s.on_next(1);
            s.on_complete();
            driven.completed.store(true, Ordering::Release);
        })
    };
    loom::future::block_on(island);
    a.join().unwrap();
    let summary = record.finish();
    assert_eq!(summary.received, 2, "rule 1.1: elements lost");
    assert_eq!(summary.completes, 1, "rule 1.5: no completion");
    assert!(
        !driven.late_request.load(Ordering::Acquire),
        "rule 2.4: the input side requested after on_complete returned"
    );
}

#[test]
fn island_input_request_races_upstream_completion() {
    loom::model(input_request_races_upstream_completion);
}

crate::loom_rejects!(
    island_model_rejects_an_input_side_that_requests_after_completion,
    "rule 2.4",
    || {
        // One guard for every consumer's requests: the input side's fault is the stream's.
        rs_impl::loom::inject(rs_impl::loom::Fault::RequestGuard);
        input_request_races_upstream_completion()
    }
);

/// A `Tracked` stage: an identity that holds a drop token and counts its `post_stop`s.
struct Tracked {
    inlet: rs_impl::island::Inlet<u64>,
    outlet: rs_impl::island::Outlet<u64>,
    _token: rs_impl::loom::sync::Arc<()>,
    stops: rs_impl::loom::sync::Arc<AtomicU64>,
}

impl rs_impl::island::Stage for Tracked {
    fn ports(&self, ports: &mut rs_impl::island::Ports) {
        ports.inlet(self.inlet).outlet(self.outlet);
    }
    fn on_push(&mut self, _: rs_impl::island::PortId, ctx: &mut rs_impl::island::Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        ctx.push(self.outlet, x);
    }
    fn on_pull(&mut self, _: rs_impl::island::PortId, ctx: &mut rs_impl::island::Ctx<'_>) {
        ctx.pull(self.inlet);
    }
    fn post_stop(&mut self) {
        self.stops.fetch_add(1, Ordering::AcqRel);
    }
}

/// The interpreter's stage table (stages owned through raw pointers, in a raw allocation that
/// each connection's dispatch entry points into): an interpreter run partly on this thread,
/// then moved to another
/// (`Send`), which finishes it (`finish`) or drops it unfinished, while this thread watches
/// the stage's `post_stop` counter. Every stage gets `post_stop` exactly once and its state is
/// dropped exactly once (the drop token), whichever thread does it. Twin: a table whose
/// `release` forgets the stage it takes out (its state is never dropped).
pub(crate) fn stage_table_moves_between_threads(finish: bool, broken: bool) {
    use rs_impl::island::stages::CollectSink;
    use rs_impl::loom::sync::Arc;
    let token = Arc::new(());
    let stops = Arc::new(AtomicU64::new(0));
    let mut g = GraphBuilder::new();
    let (o, i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..3u64));
    let (o2, i2) = g.connection::<u64>();
    g.add_stage(Tracked {
        inlet: i,
        outlet: o2,
        _token: token.clone(),
        stops: stops.clone(),
    });
    let (sink, seen) = CollectSink::new(i2);
    g.add_stage(sink);
    let mut interpreter = g.build().expect("three stages, two connections");
    if broken {
        rs_impl::loom::inject(rs_impl::loom::Fault::StageRelease);
    }
    interpreter.execute(2);
    let t = thread::spawn(move || {
        if finish {
            interpreter.execute(u64::MAX);
            assert!(interpreter.is_completed());
        }
        drop(interpreter);
    });
    assert!(stops.load(Ordering::Acquire) <= 1, "post_stop runs once");
    t.join().expect("the interpreter's thread");
    assert_eq!(stops.load(Ordering::Acquire), 1, "post_stop runs once");
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "a finalised stage's state is dropped"
    );
    if finish {
        assert_eq!(
            seen.take().expect("ended").expect("completed"),
            vec![0, 1, 2]
        );
    }
}

#[test]
fn island_stage_table_moves_between_threads() {
    loom::model(|| stage_table_moves_between_threads(true, false));
}

#[test]
fn island_stage_table_dropped_unfinished_on_another_thread() {
    loom::model(|| stage_table_moves_between_threads(false, false));
}

crate::loom_rejects!(
    island_model_rejects_a_stage_table_that_forgets_a_released_stage,
    "a finalised stage's state is dropped",
    || stage_table_moves_between_threads(true, true)
);
