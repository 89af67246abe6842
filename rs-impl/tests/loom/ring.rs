//! The hand-off ring (`rs_impl`'s private `handoff` module) through its smallest public user,
//! the publisher → `Stream` bridge: a ring of 1 or 2 slots, so that every slot is reused, and
//! elements that count their live values, so that a leak or a double drop shows in every
//! interleaving. The batching boundary's models (`boundary.rs`) run the same ring in credit
//! mode with batched publication; these run it in free-space mode, one publication per
//! element, with a `Waker` as the reader's wake target, and hand a subscription over through
//! it.

use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Waker};

use futures::Stream;
use rs_api::{Subscriber, Subscription};
use rs_impl::compat::stream_subscriber;
use rs_impl::loom::sync::atomic::{AtomicUsize, Ordering};
use rs_impl::loom::sync::{Arc, Condvar, Mutex};
use rs_impl::loom::thread;

use crate::stream::Flag;

/// An element that counts its live values.
struct Tracked(u64, Arc<AtomicUsize>);

impl Tracked {
    fn new(x: u64, live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::AcqRel);
        Tracked(x, live.clone())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let before = self.1.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "an element was dropped twice");
    }
}

/// What the producer thread was asked for and did.
#[derive(Default)]
struct Counts {
    requested: u64,
    /// Elements whose `on_next` returned (published).
    sent: u64,
    /// The producer waits for demand.
    waiting: bool,
}

/// A subscription whose requests a producer thread waits for (a blocking wait, which loom
/// models exactly, rather than a spin).
#[derive(Default)]
struct Demand {
    counts: Mutex<Counts>,
    changed: Condvar,
}

impl Demand {
    /// Waits until more was requested than sent.
    fn wait_for_demand(&self) {
        let mut c = self.counts.lock();
        while c.requested <= c.sent {
            c.waiting = true;
            c = self.changed.wait(c);
        }
        c.waiting = false;
    }

    /// One more `on_next` returned.
    fn sent_one(&self) {
        self.counts.lock().sent += 1;
    }

    /// Whether the producer waits for demand that only the consumer can make: everything it
    /// was asked for is published, so a consumer that returned `Pending` must have been woken.
    fn stuck(&self) -> bool {
        let c = self.counts.lock();
        c.waiting && c.requested <= c.sent
    }
}

struct DemandRef(StdArc<Demand>);

impl Subscription for DemandRef {
    fn request(&self, n: u64) {
        self.0.counts.lock().requested += n;
        self.0.changed.notify_all();
    }
    fn cancel(&self) {}
}

/// No lost wake-up across the wrap, every element moved out exactly once. A stream of
/// prefetch 1 (a ring of one slot: each element reuses the slot the previous one left) reads
/// 3 elements that a producer thread sends as they are requested, then `on_complete`. The
/// consumer polls again after `Pending` only when woken (like an executor), so a publication
/// that misses the consumer's park — it parks on the state word with a read-modify-write,
/// racing the producer's — shows as a stream that sleeps forever. In every interleaving all
/// 3 arrive in order, then the end, and every element is dropped once.
pub(crate) fn wraps_without_a_lost_wake_up() {
    let live = Arc::new(AtomicUsize::new(0));
    let (mut producer, mut stream) = stream_subscriber::<Tracked>(1);
    let demand = StdArc::new(Demand::default());
    producer.on_subscribe(StdArc::new(DemandRef(demand.clone())));
    let woken = StdArc::new(Flag::default());
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    let other = {
        let (flag, live, demand) = (woken.clone(), live.clone(), demand.clone());
        thread::spawn(move || {
            for x in 0..3 {
                demand.wait_for_demand();
                producer.on_next(Tracked::new(x, &live));
                demand.sent_one();
            }
            producer.on_complete();
            drop(producer);
            flag.all_sent.store(true, Ordering::Release);
        })
    };
    let mut seen = Vec::new();
    let mut pending = false;
    loop {
        if pending {
            // The producer's state first, then the wake-up: a wake-up made before the producer
            // got stuck (or done) is seen.
            let stuck = demand.stuck();
            let (was_woken, all_sent) = woken.take();
            if !was_woken {
                assert!(
                    !all_sent && !stuck,
                    "no lost wake-up: the stream returned Pending and was never woken"
                );
                thread::yield_now(); // an executor waiting for the wake-up
                continue;
            }
        }
        match Pin::new(&mut stream).poll_next(&mut cx) {
            Poll::Ready(Some(Ok(t))) => {
                seen.push(t.0);
                pending = false;
            }
            Poll::Ready(Some(Err(e))) => panic!("unexpected error: {e}"),
            Poll::Ready(None) => break,
            Poll::Pending => pending = true,
        }
    }
    other.join().unwrap();
    drop(stream);
    assert_eq!(seen, vec![0, 1, 2], "every element exactly once, in order");
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// No leak, no double drop when the consumer leaves with elements in flight. A stream of
/// prefetch 2 (a ring of two) asks for 2; the producer thread sends both and completes while
/// the consumer takes the first and drops the stream — before the second is published, while
/// it sits in the ring, or after the completion. In every interleaving each element is
/// dropped exactly once: by the consumer (taken, or left in the ring when it leaves), by the
/// producer (sent after the leave), or by the ring, its last owner.
pub(crate) fn leave_with_elements_in_flight() {
    let live = Arc::new(AtomicUsize::new(0));
    let (mut producer, mut stream) = stream_subscriber::<Tracked>(2);
    let demand = StdArc::new(Demand::default());
    producer.on_subscribe(StdArc::new(DemandRef(demand.clone())));
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    // The first poll takes the subscription and requests 2.
    assert!(Pin::new(&mut stream).poll_next(&mut cx).is_pending());
    let other = {
        let live = live.clone();
        thread::spawn(move || {
            demand.wait_for_demand();
            producer.on_next(Tracked::new(0, &live));
            producer.on_next(Tracked::new(1, &live));
            producer.on_complete();
            drop(producer);
        })
    };
    loop {
        match Pin::new(&mut stream).poll_next(&mut cx) {
            Poll::Ready(Some(Ok(t))) => {
                assert_eq!(t.0, 0, "in order");
                break;
            }
            Poll::Pending => thread::yield_now(),
            other => panic!("unexpected {:?}", other.map(|o| o.map(|r| r.map(|t| t.0)))),
        }
    }
    drop(stream); // leaves: the second element may be in the ring, on its way, or not sent
    other.join().unwrap();
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

#[test]
fn ring_wraps_without_a_lost_wake_up() {
    rs_impl::loom::model(wraps_without_a_lost_wake_up);
}

#[test]
fn ring_leave_with_elements_in_flight() {
    rs_impl::loom::model(leave_with_elements_in_flight);
}

crate::loom_rejects!(
    ring_model_rejects_a_park_without_the_comparison,
    "no lost wake-up",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::ReaderParksBlind);
        wraps_without_a_lost_wake_up()
    }
);

crate::loom_rejects!(
    ring_model_rejects_a_leave_that_forgets_the_buffer,
    "leaked",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::CancelForgetsBuffer);
        leave_with_elements_in_flight()
    }
);

/// A subscription that counts its cancels.
#[derive(Default)]
struct Cancels(AtomicUsize);

struct CancelsRef(StdArc<Cancels>);

impl Subscription for CancelsRef {
    fn request(&self, _n: u64) {}
    fn cancel(&self) {
        self.0 .0.fetch_add(1, Ordering::AcqRel);
    }
}

/// Rules 3.13 and 2.5 at the hand-over: the stream is dropped on one thread while the
/// publisher's `on_subscribe` hands the subscription over on another. Whoever comes second
/// cancels it — the stream's leave finds it handed over and never taken, or the hand-over
/// finds the stream gone — so in every interleaving it is cancelled exactly once.
pub(crate) fn leave_races_the_hand_over() {
    let (mut producer, stream) = stream_subscriber::<u64>(2);
    let cancels = StdArc::new(Cancels::default());
    let other = {
        let cancels = cancels.clone();
        thread::spawn(move || {
            producer.on_subscribe(StdArc::new(CancelsRef(cancels)));
            drop(producer);
        })
    };
    drop(stream);
    other.join().unwrap();
    assert_eq!(
        cancels.0.load(Ordering::Acquire),
        1,
        "rule 3.13: the subscription handed over is cancelled exactly once"
    );
}

#[test]
fn ring_leave_races_the_hand_over() {
    rs_impl::loom::model(leave_races_the_hand_over);
}

crate::loom_rejects!(
    ring_model_rejects_a_hand_over_that_ignores_the_leave,
    "cancelled exactly once",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::HandoverIgnoresLeave);
        leave_races_the_hand_over()
    }
);
