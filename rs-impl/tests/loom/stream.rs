//! Publisher → `Stream` (`rs_impl::compat`): the stream's waker racing `on_next` (and
//! `on_complete`) from another thread.

use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use futures::Stream;
use rs_api::{Subscriber, Subscription};
use rs_impl::compat::{stream_subscriber, PublisherStream, StreamSubscriber};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use rs_impl::loom::sync::Arc;
use rs_impl::loom::thread;

use crate::broken::BrokenStreamHandoff;

/// A waker that records that it was woken, and whether the producer is done: two loom
/// atomics, read by the consumer in that order (`all_sent` with acquire, then the wake-up
/// with a swap), so every wake-up made before `all_sent` was set is seen. (The model runs
/// with the default preemption bound: the consumer's loop while it waits for a wake-up makes
/// an unbounded search exceed loom's branch limit; the broken twin is found at that bound.)
///
/// The waker sets its flag with a **swap**, not a store: loom 0.7.3 keeps each atomic's
/// modification order as a partial order, and lets a read-modify-write read any store that no
/// other is known to follow. A plain store by a thread that never read the flag is unordered
/// with the consumer's earlier swap, so the consumer's next swap could read its own old
/// `false` although the store happened-before it (through `all_sent`): a lost wake-up that
/// cannot happen (the memory model forbids it; see [`loom_rmw_reads_past_a_store`]). A swap
/// in the waker reads the latest value, which puts it after the consumer's swap.
#[derive(Default)]
pub(crate) struct Flag {
    woken: AtomicBool,
    pub(crate) all_sent: AtomicBool,
}

impl Flag {
    /// Whether everything was sent, then takes the wake-up, if any.
    pub(crate) fn take(&self) -> (bool, bool) {
        let all_sent = self.all_sent.load(Ordering::Acquire);
        let woken = self.woken.swap(false, Ordering::AcqRel);
        (woken, all_sent)
    }
}

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.woken.swap(true, Ordering::AcqRel);
    }
}

/// A subscription that only counts what is requested.
#[derive(Default)]
struct Requests(AtomicUsize);

impl Subscription for Requests {
    fn request(&self, n: u64) {
        self.0
            .fetch_add(usize::try_from(n).unwrap_or(usize::MAX), Ordering::Relaxed);
    }
    fn cancel(&self) {}
}

/// What the model needs of a publisher-to-stream handoff, so that the broken twin runs the
/// same model: the producer half is a `Subscriber`, the consumer half a `Stream`.
pub(crate) trait StreamHandoff: Sized + Send + 'static {
    type Producer: Subscriber<u64> + Send + 'static;
    fn split() -> (Self::Producer, Self);
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<u64>>;
}

/// The real one: [`stream_subscriber`].
pub(crate) struct Real(PublisherStream<u64>);

impl StreamHandoff for Real {
    type Producer = StreamSubscriber<u64>;
    fn split() -> (StreamSubscriber<u64>, Real) {
        let (subscriber, stream) = stream_subscriber(2);
        (subscriber, Real(stream))
    }
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        Pin::new(&mut self.0)
            .poll_next(cx)
            .map(|item| item.map(|r| r.expect("no error in this model")))
    }
}

/// No lost wake-up, and every element seen once (plus loom's causality check of the buffer
/// slots: an element written on one thread is read on the other only after it was published).
/// Interleaving: the producer thread delivers `on_next(1)`, `on_next(2)` and `on_complete`
/// while the consumer polls — concurrently with each signal, in particular between its look
/// at the buffer and its parking. The consumer polls again after `Pending` only when woken,
/// like an executor; if it is parked, not woken, and the producer is done, the wake-up was
/// lost.
pub(crate) fn waker_racing_on_next<H: StreamHandoff>() {
    let (mut producer, mut consumer) = H::split();
    producer.on_subscribe(StdArc::new(Requests::default()));
    let woken = StdArc::new(Flag::default());
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    // The first poll takes the subscription and requests 2; nothing has arrived yet.
    assert!(consumer.poll(&mut cx).is_pending(), "nothing sent yet");
    let other = {
        let flag = woken.clone();
        thread::spawn(move || {
            producer.on_next(1);
            producer.on_next(2);
            producer.on_complete();
            drop(producer);
            flag.all_sent.store(true, Ordering::Release); // everything sent
        })
    };
    let mut seen = Vec::new();
    let mut pending = true;
    loop {
        if pending {
            let (was_woken, all_sent) = woken.take();
            if !was_woken {
                // Everything sent and no wake-up: the stream would sleep forever.
                assert!(
                    !all_sent,
                    "no lost wake-up: the stream returned Pending and was never woken"
                );
                thread::yield_now(); // an executor waiting for the wake-up
                continue;
            }
        }
        match consumer.poll(&mut cx) {
            Poll::Ready(Some(x)) => {
                seen.push(x);
                pending = false;
            }
            Poll::Ready(None) => break,
            Poll::Pending => pending = true,
        }
    }
    other.join().unwrap();
    assert_eq!(seen, vec![1, 2], "every element exactly once, in order");
}

#[test]
fn stream_waker_racing_on_next() {
    rs_impl::loom::model(waker_racing_on_next::<Real>);
}

crate::loom_rejects!(
    stream_model_rejects_broken_handoff,
    "no lost wake-up",
    waker_racing_on_next::<BrokenStreamHandoff>
);

/// loom 0.7.3's imprecision that [`Flag`] works around, on its own (the surprise of this
/// model's first version, which kept its bookkeeping in atomics and saw "a swap return a
/// value older than a store that happened-before it"). The main thread swaps `x` (reading the
/// initial `false`), the other thread stores `true` into `x` and then sets `done` (release);
/// the main thread sees `done` (acquire) and swaps `x` again. The first swap read the initial
/// value, so it precedes the store in `x`'s modification order; the store happens-before the
/// second swap, which must therefore read `true` (C++20 [intro.races] write-read coherence,
/// and an RMW reads the last value before it). loom lets it read the first swap's `false`:
/// the store, made by a thread that never read `x`, is unordered with that swap in loom's
/// partial modification order. It can only make loom report a failure that cannot happen,
/// never miss one; a model must not rely on a plain store being seen by a later swap.
pub(crate) fn loom_rmw_reads_past_a_store() {
    let x = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (x, done) = (x.clone(), done.clone());
        thread::spawn(move || {
            x.store(true, Ordering::Release);
            done.store(true, Ordering::Release);
        })
    };
    let first = x.swap(false, Ordering::AcqRel);
    if done.load(Ordering::Acquire) {
        let second = x.swap(false, Ordering::AcqRel);
        assert!(
            first || second,
            "loom: a swap read a value older than a store that happened-before it"
        );
    }
    writer.join().unwrap();
}

// If a later loom fixes this, this test fails: then `Flag` may go back to a plain store.
crate::loom_rejects!(
    loom_0_7_3_lets_a_swap_miss_a_store_that_happened_before_it,
    "a swap read a value older than a store that happened-before it",
    exhaustive loom_rmw_reads_past_a_store
);

/// A subscription that notes a request made after `on_complete` had returned.
struct Late {
    returned: Arc<AtomicBool>,
    late: Arc<AtomicBool>,
}

impl Subscription for Late {
    fn request(&self, _n: u64) {
        if self.returned.load(Ordering::Acquire) {
            self.late.store(true, Ordering::Release);
        }
    }
    fn cancel(&self) {}
}

/// Rule 2.4: no call on the subscription after the terminal signal was received. The stream
/// requests 2 at its first poll; the producer thread delivers `on_next(1)` and `on_complete`,
/// then notes that `on_complete` returned. The consumer takes the element and polls again,
/// which makes its replenishing request: concurrently with `on_complete`. Either the request
/// finds the end already received and is not made, or `on_complete` waits until it returns;
/// a request that runs after `on_complete` returned is the violation.
pub(crate) fn request_racing_on_complete() {
    let (mut producer, mut consumer) = stream_subscriber::<u64>(2);
    let returned = Arc::new(AtomicBool::new(false));
    let late = Arc::new(AtomicBool::new(false));
    producer.on_subscribe(StdArc::new(Late {
        returned: returned.clone(),
        late: late.clone(),
    }));
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut poll = |cx: &mut Context<'_>| Pin::new(&mut consumer).poll_next(cx);
    assert!(poll(&mut cx).is_pending(), "nothing sent yet");
    let other = {
        let returned = returned.clone();
        thread::spawn(move || {
            producer.on_next(1);
            producer.on_complete();
            returned.swap(true, Ordering::AcqRel); // a swap: see `Flag`
            drop(producer);
        })
    };
    loop {
        match poll(&mut cx) {
            Poll::Ready(Some(Ok(1))) => break,
            Poll::Pending => thread::yield_now(),
            other => panic!("unexpected {other:?}"),
        }
    }
    // The replenishing request (1 consumed, batch 1), racing `on_complete`.
    let _ = poll(&mut cx);
    other.join().unwrap();
    assert!(
        !late.load(Ordering::Acquire),
        "rule 2.4: a request ran after on_complete had returned"
    );
}

#[test]
fn stream_request_racing_on_complete() {
    rs_impl::loom::model(request_racing_on_complete);
}

crate::loom_rejects!(
    stream_request_model_rejects_an_unguarded_request,
    "rule 2.4: a request ran after on_complete had returned",
    || {
        // The twin: the request looks for the end with a plain load; the end does not wait.
        rs_impl::loom::inject(rs_impl::loom::Fault::RequestGuard);
        request_racing_on_complete();
    }
);
