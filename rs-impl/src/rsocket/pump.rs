//! An outbound stream: a local publisher's elements sent to the peer as PAYLOAD frames,
//! against the credit the peer grants.
//!
//! The responder's side of REQUEST_STREAM and of a channel's output, and the requester's side
//! of a channel's input.
//!
//! **Contract** (what the local publisher sees):
//!
//! * It is subscribed once, by the connection (on the reader task for a responder, on the
//!   writer task for a requester's channel input).
//! * It is asked for at most what the peer granted (the initial request n and every
//!   REQUEST_N, cumulative; a single credit of 2^31 − 1 means unbounded, as rsocket-java
//!   reads it), **and** at most `stream_window` elements beyond what the writer has
//!   written to the socket: a peer that reads slowly slows the publisher to its pace.
//!   Requests come from the reader task (a REQUEST_N) or the writer task (room in the
//!   window); they are serial, and none starts after the publisher's terminal signal
//!   (rule 2.4, the [`InFlight`] guard: a terminal signal on another thread waits for a
//!   request in flight).
//! * The peer's CANCEL, the peer's ERROR and the connection's end cancel its subscription;
//!   elements it queued that were not written yet are dropped.
//! * Its `on_error` goes out as an ERROR frame: `APPLICATION_ERROR` with the error's text,
//!   or the code of an [`RSocketError::Remote`](super::RSocketError).
//! * A publisher that sends more than it was asked for (rule 1.1) is cancelled and the peer
//!   gets `ERROR[APPLICATION_ERROR]`.

use rs_api::{Error, Subscriber, SubscriptionRef, UNBOUNDED};

use super::conn::Conn;
use super::error::RSocketError;
use super::frame::{Frame, MAX_U31};
use super::outbox::Out;
use super::part::OutPart;
use super::payload::Payload;
use super::table::Part;
use crate::handoff::InFlight;
use crate::loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use crate::loom::sync::{Arc, Mutex};

/// A handle on a pump (std's `Arc`: the connection holds it as an [`OutPart`] object).
pub(crate) type PumpRef = std::sync::Arc<Pump>;
use crate::serial::DrainLoop;

/// The peer cancelled, or the connection ended.
const CANCELLED: u32 = 1;
/// The local publisher signalled its terminal.
const DONE: u32 = 1 << 1;

struct SubSlot {
    subscription: Option<SubscriptionRef>,
    cancelled: bool,
}

/// One outbound stream.
pub(crate) struct Pump {
    conn: Arc<Conn>,
    id: u32,
    state: AtomicU32,
    /// Cumulative credit the peer granted ([`UNBOUNDED`] once unbounded).
    credit: AtomicU64,
    /// Elements the writer has taken off the queue (written, or dropped after a cancel).
    written: AtomicU64,
    /// Cumulative demand asked of the local publisher (published by the replenishing pass).
    requested: AtomicU64,
    /// Elements the publisher sent.
    emitted: AtomicU64,
    sub: Mutex<SubSlot>,
    /// Serialises the replenishing computation and its `request` call.
    replenish: DrainLoop<()>,
    /// Rule 2.4: no request after the publisher's terminal signal.
    in_flight: InFlight,
}

impl std::fmt::Debug for Pump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pump")
            .field("id", &self.id)
            .field("credit", &self.credit.load(Ordering::Relaxed))
            .field("written", &self.written.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Pump {
    /// A pump for stream `id` with the peer's initial credit `n` (0 for a requester's channel
    /// input, which waits for the responder's REQUEST_N).
    pub(crate) fn new(conn: Arc<Conn>, id: u32, n: u32) -> PumpRef {
        let pump = std::sync::Arc::new(Pump {
            conn,
            id,
            state: AtomicU32::new(0),
            credit: AtomicU64::new(0),
            written: AtomicU64::new(0),
            requested: AtomicU64::new(0),
            emitted: AtomicU64::new(0),
            sub: Mutex::new(SubSlot {
                subscription: None,
                cancelled: false,
            }),
            replenish: DrainLoop::new(()),
            in_flight: InFlight::new(),
        });
        if n > 0 {
            pump.add_credit(n);
        }
        pump
    }

    /// The subscriber to subscribe to the local publisher.
    pub(crate) fn subscriber(this: &PumpRef) -> PumpSubscriber {
        PumpSubscriber(this.clone())
    }

    fn add_credit(&self, n: u32) {
        let _ = self
            .credit
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                Some(if n == MAX_U31 || c == UNBOUNDED {
                    UNBOUNDED
                } else {
                    c.saturating_add(n as u64)
                })
            });
    }

    /// The peer's REQUEST_N.
    pub(crate) fn grant(&self, n: u32) {
        self.add_credit(n);
        self.refill();
    }

    /// The writer took `k` of this stream's elements off the queue.
    pub(crate) fn wrote(&self, k: u64) {
        let written = self.written.fetch_add(k, Ordering::AcqRel) + k;
        // Ask for more once half the window is free (one request per half window).
        let requested = self.requested.load(Ordering::Acquire);
        let window = self.conn.config.stream_window as u64;
        if requested.saturating_sub(written) <= window / 2 {
            self.refill();
        }
    }

    /// Asks the publisher for what the credit and the window allow.
    pub(crate) fn refill(&self) {
        self.replenish.drain(|_| {
            if self.state.load(Ordering::Acquire) != 0 {
                return;
            }
            let Some(sub) = self.sub.lock().subscription.clone() else {
                return;
            };
            let credit = self.credit.load(Ordering::Acquire);
            let written = self.written.load(Ordering::Acquire);
            let cap = written.saturating_add(self.conn.config.stream_window as u64);
            let target = credit.min(cap);
            let requested = self.requested.load(Ordering::Acquire);
            if target > requested {
                self.requested.store(target, Ordering::Release);
                self.in_flight.call(|| sub.request(target - requested));
            }
        });
    }

    /// Whether the writer should still write this stream's elements.
    pub(crate) fn is_live(&self) -> bool {
        self.state.load(Ordering::Acquire) & CANCELLED == 0
    }

    /// The peer's CANCEL or ERROR, or the connection's end: cancels the local publisher.
    pub(crate) fn cancel(&self) {
        self.state.fetch_or(CANCELLED, Ordering::AcqRel);
        let sub = {
            let mut slot = self.sub.lock();
            slot.cancelled = true;
            slot.subscription.take()
        };
        if let Some(s) = sub {
            s.cancel();
        }
    }

    /// The publisher's terminal signal: marks the stream done and takes it out of the table.
    fn end(&self) -> bool {
        self.in_flight.terminal();
        let prev = self.state.fetch_or(DONE, Ordering::AcqRel);
        self.sub.lock().subscription = None; // 2.4: the subscription counts as cancelled
        self.conn.table.finish(self.id, Part::Outbound);
        prev == 0
    }
}

/// The subscriber a [`Pump`] subscribes to its local publisher.
pub(crate) struct PumpSubscriber(PumpRef);

impl std::fmt::Debug for PumpSubscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Subscriber<Payload> for PumpSubscriber {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let p = &self.0;
        {
            let mut slot = p.sub.lock();
            if slot.cancelled || slot.subscription.is_some() || p.state.load(Ordering::Acquire) != 0
            {
                drop(slot);
                subscription.cancel(); // cancelled already, or a second subscription (2.5)
                return;
            }
            slot.subscription = Some(subscription);
        }
        p.refill();
    }

    fn on_next(&mut self, item: Payload) {
        let p = &self.0;
        let emitted = p.emitted.fetch_add(1, Ordering::Relaxed) + 1;
        if emitted > p.requested.load(Ordering::Acquire) {
            // Rule 1.1 broken by the local publisher.
            if p.end() {
                p.cancel();
                let (code, msg) = RSocketError::frame_of(&Error::msg(
                    "the stream's publisher sent more elements than requested (rule 1.1)",
                ));
                p.conn.send(Frame::Error {
                    id: p.id,
                    code,
                    data: msg.into(),
                });
            }
            return;
        }
        if p.is_live() {
            p.conn.outbox.push(Out::Next(p.clone(), item));
        }
    }

    fn on_error(&mut self, error: Error) {
        let p = &self.0;
        if p.end() && p.is_live() {
            let (code, msg) = RSocketError::frame_of(&error);
            p.conn.send(Frame::Error {
                id: p.id,
                code,
                data: msg.into(),
            });
            // "Upon sending an ERROR, the stream is terminated on both the Requester and
            // Responder": a channel's inbound half ends too.
            if let Some(slot) = p.conn.table.remove(p.id) {
                if let Some(inbound) = slot.inbound {
                    inbound.fail(error);
                }
            }
        }
    }

    fn on_complete(&mut self) {
        let p = &self.0;
        if p.end() && p.is_live() {
            p.conn.outbox.push(Out::Complete(p.clone()));
        }
    }
}

impl OutPart for Pump {
    fn id(&self) -> u32 {
        self.id
    }
    fn grant(&self, n: u32) {
        Pump::grant(self, n)
    }
    fn wrote(&self, k: u64) {
        Pump::wrote(self, k)
    }
    fn is_live(&self) -> bool {
        Pump::is_live(self)
    }
    fn cancel(&self) {
        Pump::cancel(self)
    }
}
