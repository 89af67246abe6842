//! The RSocket connection's stream table and its streams (`rs_impl::rsocket`, through its
//! loom-only `model` handle, which runs the real code of the reader's dispatch, the writer's
//! queue handling and the close): a CANCEL racing a PAYLOAD, a REQUEST_N racing the served
//! publisher's completion, a stream opened while the connection closes, a cancel racing
//! the writer's opening of the request, and a request_response's `Response` dropped while the
//! writer opens it. Each has a broken twin through `rs_impl::loom::inject`.

use std::sync::Arc as StdArc;

use rs_api::{Error, Publisher, Subscriber, Subscription, SubscriptionRef};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use rs_impl::loom::sync::{Arc, Mutex};
use rs_impl::loom::thread;
use rs_impl::loom::Fault;
use rs_impl::rsocket::model::{Model, Wire};
use rs_impl::rsocket::Payload;

use crate::loom_rejects;

/// What a subscriber saw, and whether it was dropped.
#[derive(Default)]
struct Seen {
    next: AtomicUsize,
    terminal: AtomicUsize,
    dropped: AtomicBool,
    sub: Mutex<Option<SubscriptionRef>>,
}

struct Probe(Arc<Seen>, u64);

impl Drop for Probe {
    fn drop(&mut self) {
        assert!(
            !self.0.dropped.swap(true, Ordering::AcqRel),
            "dropped twice"
        );
    }
}

impl Subscriber<Payload> for Probe {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        if self.1 > 0 {
            s.request(self.1);
        }
        *self.0.sub.lock() = Some(s);
    }
    fn on_next(&mut self, _: Payload) {
        self.0.next.fetch_add(1, Ordering::AcqRel);
    }
    fn on_error(&mut self, _: Error) {
        self.0.terminal.fetch_add(1, Ordering::AcqRel);
    }
    fn on_complete(&mut self) {
        self.0.terminal.fetch_add(1, Ordering::AcqRel);
    }
}

fn subscription(seen: &Seen) -> SubscriptionRef {
    seen.sub.lock().clone().expect("subscribed")
}

/// Rule 3.13 and the table: the subscriber's cancel (its thread) races the reader's
/// delivery of a PAYLOAD (the reader's thread). In every interleaving the subscriber is
/// dropped once, sees at most the one element, the stream leaves the table, and exactly one
/// CANCEL goes out.
fn cancel_racing_payload() {
    let m = Model::client();
    let seen = Arc::new(Seen::default());
    let stream = m.request_stream(Box::new(Probe(seen.clone(), 1)));
    assert_eq!(m.writer(), [Wire::Request(1)]);
    let id = stream.id();
    let reader = {
        let m = m.clone();
        thread::spawn(move || assert!(m.payload(id, "x")))
    };
    subscription(&seen).cancel();
    reader.join().unwrap();
    *seen.sub.lock() = None;
    assert!(
        seen.dropped.load(Ordering::Acquire),
        "rule 3.13: the subscriber was never dropped"
    );
    assert!(seen.next.load(Ordering::Acquire) <= 1);
    assert_eq!(m.streams(), 0, "the cancelled stream stays in the table");
    assert_eq!(m.writer(), [Wire::Cancel(id)]);
}

#[test]
fn cancel_racing_payload_model() {
    rs_impl::loom::model(cancel_racing_payload);
}

loom_rejects!(
    /// The twin: a cancel that does not run the drain leaves the subscriber to a drainer that
    /// may never come.
    broken_cancel_racing_payload_is_rejected,
    "rule 3.13",
    fault Fault::CancelSkipsDrain,
    cancel_racing_payload
);

/// A served publisher of one element whose subscription records requests made after its
/// terminal signal returned.
#[derive(Clone, Default)]
struct Recorder {
    ended: StdArc<AtomicBool>,
    late: StdArc<AtomicBool>,
    requested: StdArc<AtomicUsize>,
    subscriber: StdArc<Mutex<Option<Box<dyn Subscriber<Payload>>>>>,
}

struct RecorderSub(Recorder);

impl Subscription for RecorderSub {
    fn request(&self, n: u64) {
        if self.0.ended.load(Ordering::Acquire) {
            self.0.late.store(true, Ordering::Release);
        }
        self.0.requested.fetch_add(n as usize, Ordering::AcqRel);
    }
    fn cancel(&self) {}
}

impl Publisher<Payload> for Recorder {
    fn subscribe(&self, mut s: Box<dyn Subscriber<Payload>>) {
        s.on_subscribe(StdArc::new(RecorderSub(self.clone())));
        *self.subscriber.lock() = Some(s);
    }
}

/// Rule 2.4: the peer's REQUEST_N (the reader's thread) races the served publisher's
/// completion (the publisher's thread). No request starts after `on_complete` returned; the
/// stream leaves the table; one element and one COMPLETE go out.
fn request_n_racing_completion() {
    let m = Model::server();
    let publisher = Recorder::default();
    m.serve_stream(1, 1, &publisher);
    let mut s = publisher.subscriber.lock().take().expect("subscribed");
    let reader = {
        let m = m.clone();
        thread::spawn(move || m.request_n(1, 1))
    };
    s.on_next(Payload::from("x"));
    s.on_complete();
    publisher.ended.store(true, Ordering::Release);
    reader.join().unwrap();
    assert!(
        !publisher.late.load(Ordering::Acquire),
        "rule 2.4: a request started after on_complete returned"
    );
    assert_eq!(m.streams(), 0);
    assert_eq!(m.writer(), [Wire::Next(1), Wire::Complete(1)]);
}

#[test]
fn request_n_racing_completion_model() {
    rs_impl::loom::model(request_n_racing_completion);
}

loom_rejects!(
    /// The twin: the one rule-2.4 guard broken (a plain look for the end, no wait).
    broken_request_n_racing_completion_is_rejected,
    "rule 2.4",
    fault Fault::RequestGuard,
    request_n_racing_completion
);

/// No stream without its end: the writer opens a requested stream (its thread) while the
/// reader closes the connection (its thread). The subscriber gets exactly one terminal
/// signal and is dropped, and nothing stays in the table.
fn open_while_closing() {
    let m = Model::client();
    let seen = Arc::new(Seen::default());
    let _stream = m.request_stream(Box::new(Probe(seen.clone(), 1)));
    let writer = {
        let m = m.clone();
        thread::spawn(move || {
            m.writer();
        })
    };
    m.close();
    writer.join().unwrap();
    *seen.sub.lock() = None;
    assert_eq!(
        seen.terminal.load(Ordering::Acquire),
        1,
        "a stream opened while the connection closed never ended"
    );
    assert!(seen.dropped.load(Ordering::Acquire));
    assert_eq!(m.streams(), 0);
}

#[test]
fn open_while_closing_model() {
    rs_impl::loom::model(open_while_closing);
}

loom_rejects!(
    /// The twin: opening does not look whether the table was closed.
    broken_open_while_closing_is_rejected,
    "never ended",
    fault Fault::OpenIgnoresClose,
    open_while_closing
);

/// The subscriber's cancel (its thread) races the writer's opening of its request (the
/// writer's thread): either the request never goes out, or it goes out followed by exactly
/// one CANCEL; the stream leaves the table either way.
fn cancel_racing_open() {
    let m = Model::client();
    let seen = Arc::new(Seen::default());
    let _stream = m.request_stream(Box::new(Probe(seen.clone(), 1)));
    let writer = {
        let m = m.clone();
        thread::spawn(move || m.writer())
    };
    subscription(&seen).cancel();
    let mut wire = writer.join().unwrap();
    wire.extend(m.writer());
    *seen.sub.lock() = None;
    assert!(
        wire.is_empty() || wire == [Wire::Request(1), Wire::Cancel(1)],
        "a cancelled request went out without its CANCEL: {wire:?}"
    );
    assert_eq!(m.streams(), 0, "a cancelled stream stays in the table");
    assert!(seen.dropped.load(Ordering::Acquire));
}

#[test]
fn cancel_racing_open_model() {
    rs_impl::loom::model(cancel_racing_open);
}

loom_rejects!(
    /// The twin: the writer does not look for a cancel after it put the stream in the table.
    broken_cancel_racing_open_is_rejected,
    "without its CANCEL",
    fault Fault::OpenIgnoresCancel,
    cancel_racing_open
);

/// The requester drops its `Response` (its thread) while the writer opens the request (the
/// writer's thread), under the request's one lock: either the request never goes out, or it
/// goes out followed by exactly one CANCEL; the stream leaves the table either way.
fn response_dropped_while_opening() {
    let m = Model::client();
    let response = m.request_response();
    let writer = {
        let m = m.clone();
        thread::spawn(move || m.writer())
    };
    drop(response);
    let mut wire = writer.join().unwrap();
    wire.extend(m.writer());
    assert!(
        wire.is_empty() || wire == [Wire::Request(1), Wire::Cancel(1)],
        "a dropped request_response went out without its CANCEL: {wire:?}"
    );
    assert_eq!(
        m.streams(),
        0,
        "a dropped request_response stays in the table"
    );
}

#[test]
fn response_dropped_while_opening_model() {
    rs_impl::loom::model(response_dropped_while_opening);
}

loom_rejects!(
    /// The twin: the writer lets the request's lock go between taking the request and
    /// recording its id, so a drop in between finds nothing to cancel.
    broken_response_dropped_while_opening_is_rejected,
    "without its CANCEL",
    fault Fault::ResponseOpenSplit,
    response_dropped_while_opening
);
