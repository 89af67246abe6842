//! An inbound stream: PAYLOADs from the peer delivered to a local subscriber, and the
//! subscriber's `request(n)` and `cancel` sent back as REQUEST_N and CANCEL.
//!
//! The requester's side of REQUEST_STREAM and REQUEST_CHANNEL (the client's
//! [`RemoteStream`](super::RemoteStream)), and the responder's side of a channel's input.
//!
//! **Contract** (what the subscriber sees):
//!
//! * `on_subscribe` first, on the thread that subscribed; elements, completion and errors on
//!   the connection's reader task, or on a thread that called `request` while elements
//!   waited: signals are serial (one [`DrainLoop`]), never concurrent.
//! * The first `request(n)` sends the request (REQUEST_STREAM or REQUEST_CHANNEL) with `n`
//!   as its initial credit; later requests send REQUEST_N with the credit accumulated since
//!   the last one went out. Demand is counted in `u64` and saturates (3.17); on the wire a
//!   bounded demand is split into frames of at most 2^31 − 2, and an unbounded one is the
//!   single credit 2^31 − 1, which rsocket-java reads as unbounded. `request(0)` cancels the
//!   stream and delivers the rule 3.9 error.
//! * `cancel` sends CANCEL if the request went out (nothing if it did not), takes the stream
//!   out of the table, and drops the subscriber (3.13). Elements already on the wire are
//!   dropped.
//! * The peer's ERROR arrives as `on_error` carrying an [`RSocketError::Remote`] with its
//!   code; the connection's end as `on_error` with its reason.
//! * A peer that sends more PAYLOADs than requested breaks the protocol: the stream is
//!   cancelled and the subscriber gets an [`RSocketError::Protocol`].
//! * **Bound:** elements wait here only while the subscriber is busy on another thread; at
//!   `inbound_buffer` waiting, the reader stops reading the socket until the drainer makes
//!   room.

use std::collections::VecDeque;
use std::task::{Context, Poll, Waker};

use rs_api::{BoxSubscriber, Error, Subscription, SubscriptionRef, UNBOUNDED};

use super::conn::Conn;
use super::error::RSocketError;
use super::frame::MAX_U31;
use super::outbox::Out;
use super::part::{Control, InPart, Request};
use super::payload::Payload;
use super::table::Part;
use crate::demand::Demand;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use crate::loom::sync::{Arc, Mutex};
use crate::panics::{drop_guarded, guard};
use crate::serial::DrainLoop;

/// The opening request is queued for the writer.
const OPEN_QUEUED: u32 = 1;
/// The writer sent the request: `id` is set and the stream is in the table.
const OPENED: u32 = 1 << 1;
/// The subscriber cancelled, or a local error ended the stream.
const CANCELLED: u32 = 1 << 2;
/// The stream ended from the wire side (the peer's terminal, or the connection's end).
const DONE: u32 = 1 << 3;
/// An `Out::Credit` for this stream waits for the writer.
const CREDIT_QUEUED: u32 = 1 << 4;
/// `request(0)`: the 3.9 error waits for the drainer.
const BAD_REQUEST: u32 = 1 << 5;
/// The writer sent the unbounded credit (2^31 − 1): no REQUEST_N follows.
const UNBOUNDED_SENT: u32 = 1 << 6;

/// The largest credit one REQUEST_N carries for a bounded demand: 2^31 − 1 itself means
/// unbounded to rsocket-java.
const MAX_BOUNDED_CREDIT: u64 = MAX_U31 as u64 - 1;

/// An event from the wire, waiting for the drainer.
enum Event {
    Next(Payload),
    Complete,
    Error(Error),
}

struct Events {
    items: VecDeque<Event>,
    /// The reader, waiting for room.
    reader: Option<Waker>,
}

/// The drainer's state.
struct Delivery {
    subscriber: Option<BoxSubscriber<Payload>>,
    /// The handle for `on_subscribe`, until it is delivered.
    handle: Option<SubscriptionRef>,
    /// Elements delivered.
    emitted: u64,
    /// A terminal signal was delivered (or the subscriber is gone).
    finished: bool,
}

/// One inbound stream (shared: the table, the outbox and the subscription hold it).
pub(crate) struct Inbound {
    /// This stream's own handle, for the items it queues for the writer.
    me: std::sync::Weak<Inbound>,
    conn: Arc<Conn>,
    /// This side requested the stream (its cancel ends the whole stream); otherwise it is a
    /// responder's channel input (its cancel ends only this half).
    requester: bool,
    /// The stream id, once the request went out (0 before).
    id: AtomicU32,
    state: AtomicU32,
    /// The subscriber's total demand.
    demand: Demand,
    /// Credit requested and not yet sent ([`UNBOUNDED`] once unbounded: sticky).
    unsent: AtomicU64,
    /// PAYLOADs received (the reader's count, against `demand`).
    received: AtomicU64,
    events: Mutex<Events>,
    drain: DrainLoop<Delivery>,
    /// The subscriber, until the first pass takes it.
    pending: Mutex<Option<BoxSubscriber<Payload>>>,
    /// The request to open, until the writer takes it (none on the responder side).
    request: Mutex<Option<Request>>,
}

impl std::fmt::Debug for Inbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbound")
            .field("id", &self.id.load(Ordering::Relaxed))
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// The subscription handed to the subscriber.
struct Handle(std::sync::Arc<Inbound>);

impl Subscription for Handle {
    fn request(&self, n: u64) {
        self.0.request(n);
    }

    fn cancel(&self) {
        self.0.cancel();
    }
}

impl Inbound {
    /// A requester's stream, to be opened by its first request.
    pub(crate) fn requester(conn: Arc<Conn>, request: Request) -> std::sync::Arc<Self> {
        Self::new(conn, true, 0, 0, Some(request))
    }

    /// A responder's channel input on stream `id` (already open: the peer opened it).
    pub(crate) fn responder(conn: Arc<Conn>, id: u32) -> std::sync::Arc<Self> {
        Self::new(conn, false, id, OPENED, None)
    }

    fn new(
        conn: Arc<Conn>,
        requester: bool,
        id: u32,
        state: u32,
        request: Option<Request>,
    ) -> std::sync::Arc<Self> {
        std::sync::Arc::new_cyclic(|me| Inbound {
            me: me.clone(),
            requester,
            events: Mutex::new(Events {
                items: VecDeque::with_capacity(conn.config.inbound_buffer.min(64)),
                reader: None,
            }),
            conn,
            id: AtomicU32::new(id),
            state: AtomicU32::new(state),
            demand: Demand::new(),
            unsent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            drain: DrainLoop::new(Delivery {
                subscriber: None,
                handle: None,
                emitted: 0,
                finished: false,
            }),
            pending: Mutex::new(None),
            request: Mutex::new(request),
        })
    }

    /// This stream's handle (it is alive: `self` is borrowed from it).
    fn arc(&self) -> std::sync::Arc<Self> {
        self.me.upgrade().expect("a live stream")
    }

    /// The stream id (0 until the request went out).
    pub(crate) fn id(&self) -> u32 {
        self.id.load(Ordering::Acquire)
    }

    /// Subscribes `subscriber`: `on_subscribe` now, on this thread.
    pub(crate) fn start(&self, subscriber: BoxSubscriber<Payload>) {
        *self.pending.lock() = Some(subscriber);
        let handle: SubscriptionRef = std::sync::Arc::new(Handle(self.arc()));
        let mut handle = Some(handle);
        self.drain.drain(|d| {
            if d.subscriber.is_none() && !d.finished {
                d.subscriber = self.pending.lock().take();
                d.handle = handle.take();
            }
            self.pass(d);
        });
    }

    fn run(&self) {
        self.drain.drain(|d| self.pass(d));
    }

    /// The drainer's pass: `on_subscribe` first, then every event the demand allows.
    fn pass(&self, d: &mut Delivery) {
        if d.finished {
            self.events.lock().items.clear();
            return;
        }
        let Some(sub) = d.subscriber.as_mut() else {
            return;
        };
        if let Some(h) = d.handle.take() {
            if guard("on_subscribe", || sub.on_subscribe(h)).is_err() {
                self.cancel();
                return self.finish(d);
            }
        }
        loop {
            let state = self.state.load(Ordering::Acquire);
            if state & BAD_REQUEST != 0 {
                let sub = d.subscriber.as_mut().expect("the subscriber");
                let _ = guard("on_error", || {
                    sub.on_error(rs_api::SpecViolation::NonPositiveRequest.into())
                });
                return self.finish(d);
            }
            if state & CANCELLED != 0 {
                return self.finish(d);
            }
            let event = {
                let mut ev = self.events.lock();
                let allowed = match ev.items.front() {
                    None => false,
                    Some(Event::Next(_)) => d.emitted < self.demand.total(),
                    Some(_) => true,
                };
                if !allowed {
                    None
                } else {
                    let e = ev.items.pop_front();
                    let r = ev.reader.take();
                    drop(ev);
                    if let Some(r) = r {
                        r.wake();
                    }
                    e
                }
            };
            let sub = d.subscriber.as_mut().expect("the subscriber");
            match event {
                None => return,
                Some(Event::Next(p)) => {
                    d.emitted += 1;
                    if guard("on_next", || sub.on_next(p)).is_err() {
                        self.cancel();
                        return self.finish(d);
                    }
                }
                Some(Event::Complete) => {
                    let _ = guard("on_complete", || sub.on_complete());
                    return self.finish(d);
                }
                Some(Event::Error(e)) => {
                    let _ = guard("on_error", || sub.on_error(e));
                    return self.finish(d);
                }
            }
        }
    }

    /// Drops the subscriber and whatever waits (3.13).
    fn finish(&self, d: &mut Delivery) {
        d.finished = true;
        d.handle = None;
        if let Some(s) = d.subscriber.take() {
            drop_guarded(s);
        }
        let mut ev = self.events.lock();
        ev.items.clear();
        let r = ev.reader.take();
        drop(ev);
        if let Some(r) = r {
            r.wake();
        }
    }

    /// The subscriber's `request(n)`.
    pub(crate) fn request(&self, n: u64) {
        let state = self.state.load(Ordering::Acquire);
        if state & (CANCELLED | DONE) != 0 {
            return; // 3.6
        }
        if state & UNBOUNDED_SENT != 0 {
            return; // unbounded already, on both sides
        }
        if self.demand.request(n).is_err() {
            self.state.fetch_or(BAD_REQUEST, Ordering::AcqRel);
            self.cancel_wire();
            return self.run();
        }
        let unbounded = self.demand.is_unbounded();
        let _ = self
            .unsent
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                if u == UNBOUNDED || unbounded {
                    Some(UNBOUNDED)
                } else {
                    Some(u.saturating_add(n))
                }
            });
        if state & (OPEN_QUEUED | OPENED) == 0 {
            let prev = self.state.fetch_or(OPEN_QUEUED, Ordering::AcqRel);
            if prev & (OPEN_QUEUED | OPENED) == 0 {
                if !self
                    .conn
                    .outbox
                    .push(Out::Open(super::outbox::Opening::Stream(self.arc())))
                {
                    self.fail(self.closed_error().into());
                }
                return self.run();
            }
        }
        self.queue_credit();
        self.run();
    }

    /// Queues this stream's credit-or-cancel item unless one waits already.
    fn queue_credit(&self) {
        let prev = self.state.fetch_or(CREDIT_QUEUED, Ordering::AcqRel);
        if prev & CREDIT_QUEUED == 0 {
            self.conn.outbox.push(Out::Credit(self.arc()));
        }
    }

    /// The subscriber's `cancel`.
    pub(crate) fn cancel(&self) {
        self.cancel_wire();
        if !fault::active(Fault::CancelSkipsDrain) {
            self.run();
        }
    }

    /// Marks the stream cancelled; if the request went out and the stream is live, takes it
    /// out of the table (with a channel's outbound half) and queues the CANCEL.
    fn cancel_wire(&self) {
        let prev = self.state.fetch_or(CANCELLED, Ordering::AcqRel);
        if prev & CANCELLED != 0 {
            return;
        }
        if prev & OPENED != 0 && prev & DONE == 0 {
            let id = self.id();
            if self.requester {
                // "Upon sending a CANCEL, the stream is terminated on the Requester": both
                // halves of a channel end here.
                if let Some(slot) = self.conn.table.remove(id) {
                    if let Some(pump) = slot.outbound {
                        pump.cancel();
                    }
                }
            } else {
                // A responder cancels only the requester's half of the channel.
                self.conn.table.finish(id, Part::Inbound);
            }
            self.queue_credit();
        }
    }

    fn closed_error(&self) -> RSocketError {
        self.conn
            .close_reason()
            .unwrap_or_else(|| RSocketError::Closed("the connection is closed".into()))
    }

    // --- the writer's side

    /// Opening: takes the request to send (`None` if cancelled meanwhile, after which the
    /// writer sends nothing).
    pub(crate) fn take_request(&self) -> Option<Request> {
        if self.state.load(Ordering::Acquire) & CANCELLED != 0 {
            return None;
        }
        self.request.lock().take()
    }

    /// The writer put the stream in the table as `id` and is about to send its request:
    /// `false` when a cancel came first (the writer then takes the stream out again and
    /// sends nothing).
    pub(crate) fn opened(&self, id: u32) -> bool {
        self.id.store(id, Ordering::Release);
        let prev = self.state.fetch_or(OPENED, Ordering::AcqRel);
        if fault::active(Fault::OpenIgnoresCancel) {
            return true;
        }
        prev & CANCELLED == 0
    }

    /// The writer takes the credit for the next REQUEST_N (or the initial request n): at
    /// most 2^31 − 2 for a bounded demand (the rest stays, and another credit item is
    /// queued for it), 2^31 − 1 once for an unbounded one, and 0 when there is nothing to
    /// send.
    pub(crate) fn take_credit(&self) -> u32 {
        if self.state.load(Ordering::Acquire) & UNBOUNDED_SENT != 0 {
            return 0;
        }
        let taken = self.unsent.swap(0, Ordering::AcqRel);
        if taken == UNBOUNDED {
            // Sent once: afterwards the stream is unbounded on both sides.
            self.state.fetch_or(UNBOUNDED_SENT, Ordering::AcqRel);
            return MAX_U31;
        }
        let sent = taken.min(MAX_BOUNDED_CREDIT);
        if taken > sent {
            let rest = taken - sent;
            let _ = self
                .unsent
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                    Some(if u == UNBOUNDED {
                        u
                    } else {
                        u.saturating_add(rest)
                    })
                });
            self.queue_credit();
        }
        sent as u32
    }

    /// The writer's credit-or-cancel item: what to send now.
    pub(crate) fn flush_control(&self) -> Control {
        let prev = self.state.fetch_and(!CREDIT_QUEUED, Ordering::AcqRel);
        if prev & OPENED == 0 {
            return Control::Nothing; // the opening request carries the credit
        }
        if prev & CANCELLED != 0 {
            if prev & DONE == 0 {
                return Control::Cancel(self.id());
            }
            return Control::Nothing;
        }
        if prev & DONE != 0 {
            return Control::Nothing;
        }
        match self.take_credit() {
            0 => Control::Nothing,
            n => Control::RequestN(self.id(), n),
        }
    }

    // --- the reader's side

    /// A PAYLOAD(N) arrived. Waits (returns `Pending`) while `inbound_buffer` elements wait
    /// for a busy subscriber; `Ready(false)` when the peer sent more than requested (the
    /// stream is failed).
    pub(crate) fn poll_next(
        &self,
        cx: &mut Context<'_>,
        payload: &mut Option<Payload>,
    ) -> Poll<bool> {
        let state = self.state.load(Ordering::Acquire);
        if state & (CANCELLED | DONE) != 0 {
            *payload = None;
            return Poll::Ready(true);
        }
        {
            let mut ev = self.events.lock();
            if ev.items.len() >= self.conn.config.inbound_buffer {
                ev.reader = Some(cx.waker().clone());
                drop(ev);
                // The reader waits: what it queued must not wait with it.
                self.conn.outbox.uncork();
                return Poll::Pending;
            }
            let received = self.received.load(Ordering::Relaxed) + 1;
            if received > self.demand.total() {
                drop(ev);
                *payload = None;
                self.protocol_violation();
                return Poll::Ready(false);
            }
            self.received.store(received, Ordering::Relaxed);
            ev.items
                .push_back(Event::Next(payload.take().expect("the payload")));
        }
        self.run();
        Poll::Ready(true)
    }

    fn protocol_violation(&self) {
        let e = RSocketError::Protocol(format!(
            "stream {}: more PAYLOADs than the {} requested",
            self.id(),
            self.demand.total()
        ));
        self.push_terminal(Event::Error(e.into()));
        self.cancel_wire();
        self.run();
    }

    /// The peer completed the stream (PAYLOAD with C).
    pub(crate) fn complete(&self) {
        if self.end_wire() {
            self.push_terminal(Event::Complete);
            self.run();
        }
    }

    /// The stream failed from the wire side: the peer's ERROR, or the connection's end.
    pub(crate) fn fail(&self, error: Error) {
        if self.end_wire() {
            self.push_terminal(Event::Error(error));
            self.drain.drain(|d| self.pass(d));
        }
    }

    /// Marks the wire side done; `false` if it was already (or the subscriber cancelled).
    fn end_wire(&self) -> bool {
        let prev = self.state.fetch_or(DONE, Ordering::AcqRel);
        if prev & DONE != 0 {
            return false;
        }
        if prev & OPENED != 0 {
            self.conn.table.finish(self.id(), Part::Inbound);
        }
        prev & CANCELLED == 0
    }

    fn push_terminal(&self, event: Event) {
        self.events.lock().items.push_back(event);
    }
}

impl InPart for Inbound {
    fn take_request(&self) -> Option<Request> {
        Inbound::take_request(self)
    }
    fn opened(&self, id: u32) -> bool {
        Inbound::opened(self, id)
    }
    fn take_credit(&self) -> u32 {
        Inbound::take_credit(self)
    }
    fn flush_control(&self) -> Control {
        Inbound::flush_control(self)
    }
    fn poll_next(&self, cx: &mut Context<'_>, payload: &mut Option<Payload>) -> Poll<bool> {
        Inbound::poll_next(self, cx, payload)
    }
    fn complete(&self) {
        Inbound::complete(self)
    }
    fn fail(&self, error: Error) {
        Inbound::fail(self, error)
    }
}
