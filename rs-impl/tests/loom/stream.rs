//! Publisher → `Stream` (`rs_impl::compat`): the stream's waker racing `on_next` (and
//! `on_complete`) from another thread.

use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use futures::Stream;
use rs_api::{Subscriber, Subscription};
use rs_impl::compat::{stream_subscriber, PublisherStream, StreamSubscriber};
use rs_impl::loom::sync::atomic::{AtomicUsize, Ordering};
use rs_impl::loom::sync::Mutex;
use rs_impl::loom::thread;

use crate::broken::BrokenStreamHandoff;

/// A waker that records that it was woken, and whether the producer is done, under one loom
/// lock: the model's own bookkeeping is totally ordered, so only the handoff under test can
/// lose a wake-up.
#[derive(Default)]
struct Flag(Mutex<(bool, bool)>);

impl Flag {
    /// Takes the wake-up, if any; and whether everything was sent.
    fn take(&self) -> (bool, bool) {
        let mut g = self.0.lock();
        let woken = std::mem::take(&mut g.0);
        (woken, g.1)
    }
}

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.0.lock().0 = true;
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
            flag.0.lock().1 = true; // everything sent
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
