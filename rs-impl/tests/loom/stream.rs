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
/// with a swap), so every wake-up made before `all_sent` was set is seen.
///
/// The waker sets its flag with a **swap**, not a store: loom 0.7.3 keeps each atomic's
/// modification order as a partial order, and lets a read-modify-write read any store that no
/// other is known to follow. A plain store by a thread that never read the flag is unordered
/// with the consumer's earlier swap, so the consumer's next swap could read its own old
/// `false` although the store happened-before it (through `all_sent`): a lost wake-up that
/// cannot happen (the memory model forbids it; see [`loom_rmw_reads_past_a_store`]). A swap
/// in the waker reads the latest value, which puts it after the consumer's swap.
#[derive(Default)]
struct Flag {
    woken: AtomicBool,
    all_sent: AtomicBool,
}

impl Flag {
    /// Whether everything was sent, then takes the wake-up, if any.
    fn take(&self) -> (bool, bool) {
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
    crate::exhaustive(waker_racing_on_next::<Real>);
}

crate::loom_rejects!(
    stream_model_rejects_broken_handoff,
    "no lost wake-up",
    waker_racing_on_next::<BrokenStreamHandoff>
);

/// The model's bookkeeping on its own: one thread wakes (a store) and then says it is done (a
/// second store, release); the checker reads both and asserts "done implies woken". Read in
/// the right order (done first, acquire; then the swap) this holds in every interleaving.
/// `out_of_order` reads the wake-up first: then the writer can do both stores between the two
/// reads, and the check fails although nothing was lost. That is what the first version of
/// `waker_racing_on_next` did; it looked like loom letting a swap read a value older than a
/// store that happened-before it, but no happens-before edge led to the swap: the acquire load
/// came after it.
pub(crate) fn bookkeeping_in_order(out_of_order: bool) {
    let flag = Arc::new(Flag::default());
    let writer = {
        let flag = flag.clone();
        thread::spawn(move || {
            flag.woken.store(true, Ordering::Release);
            flag.all_sent.store(true, Ordering::Release);
        })
    };
    let (woken, all_sent) = if out_of_order {
        let woken = flag.woken.swap(false, Ordering::AcqRel);
        (woken, flag.all_sent.load(Ordering::Acquire))
    } else {
        flag.take()
    };
    assert!(
        woken || !all_sent,
        "bookkeeping: done, but the wake-up was not seen"
    );
    writer.join().unwrap();
}

#[test]
fn stream_model_bookkeeping_read_in_order() {
    crate::exhaustive(|| bookkeeping_in_order(false));
}

crate::loom_rejects!(
    stream_model_bookkeeping_read_out_of_order_is_wrong,
    "the wake-up was not seen",
    exhaustive || bookkeeping_in_order(true)
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
