//! Publisher → `Stream` (`rs_impl::compat`): the stream's waker racing `on_next` (and
//! `on_complete`) from another thread.

use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use futures::Stream;
use rs_api::{Subscriber, Subscription};
use rs_impl::compat::{stream_subscriber, PublisherStream, StreamSubscriber};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use rs_impl::loom::thread;

use crate::broken::BrokenHandoff;

/// A waker that records that it was woken (a loom atomic, so the model sees the edge).
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.0.store(true, Ordering::Release);
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
pub(crate) trait Handoff: Sized + Send + 'static {
    type Producer: Subscriber<u64> + Send + 'static;
    fn split() -> (Self::Producer, Self);
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<u64>>;
}

/// The real one: [`stream_subscriber`].
pub(crate) struct Real(PublisherStream<u64>);

impl Handoff for Real {
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
/// slot: the element written on one thread is read on the other only after it was
/// published). Interleaving: the consumer polls (finds nothing, registers its waker, parks)
/// while the producer thread delivers `on_next(7)` and `on_complete` — before, during, or
/// after the consumer's parking. In every interleaving either the poll sees the element, or
/// the consumer was woken; the next polls then see the element and the end.
pub(crate) fn waker_racing_on_next<H: Handoff>() {
    let (mut producer, mut consumer) = H::split();
    producer.on_subscribe(StdArc::new(Requests::default()));
    let woken = StdArc::new(Flag::default());
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    // The first poll takes the subscription and requests; nothing has arrived yet.
    assert!(consumer.poll(&mut cx).is_pending(), "nothing sent yet");
    let other = thread::spawn(move || {
        producer.on_next(7);
        producer.on_complete();
        drop(producer);
    });
    let mut seen = Vec::new();
    let mut ended = false;
    // The race: one poll concurrent with the producer.
    let mut pending = match consumer.poll(&mut cx) {
        Poll::Ready(Some(x)) => {
            seen.push(x);
            false
        }
        Poll::Ready(None) => {
            ended = true;
            false
        }
        Poll::Pending => true,
    };
    other.join().unwrap();
    // Everything is sent. After a `Pending`, a consumer is polled again only when woken: one
    // parked without a wake-up to come would sleep forever.
    while !ended {
        let was_woken = woken.0.swap(false, Ordering::Acquire);
        assert!(
            !pending || was_woken,
            "no lost wake-up: the stream returned Pending and was never woken"
        );
        pending = match consumer.poll(&mut cx) {
            Poll::Ready(Some(x)) => {
                seen.push(x);
                false
            }
            Poll::Ready(None) => {
                ended = true;
                false
            }
            Poll::Pending => true,
        };
    }
    assert_eq!(seen, vec![7], "every element exactly once");
}

#[test]
fn stream_waker_racing_on_next() {
    crate::exhaustive(waker_racing_on_next::<Real>);
}

crate::loom_rejects!(
    stream_model_rejects_broken_handoff,
    "no lost wake-up",
    waker_racing_on_next::<BrokenHandoff>
);
