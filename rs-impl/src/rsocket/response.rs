//! request_response: the requester's [`Response`] future and the responder's answer in
//! progress.
//!
//! **Contract.** A [`Response`] sends its REQUEST_RESPONSE when first polled (futures do
//! nothing until polled), resolves with the answer's payload or the peer's ERROR (an
//! [`RSocketError::Remote`]), or the connection's end. Dropping it before it resolves sends
//! CANCEL (if the request went out) and takes the stream out of the table.
//!
//! On the responder, an answer that is not ready at once runs as a tokio task; the peer's
//! CANCEL aborts it, and nothing is sent.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::conn::Conn;
use super::error::RSocketError;
use super::frame::Frame;
use super::metadata::Route;
use super::outbox::{Opening, Out};
use super::part::RespPart;
use super::payload::Payload;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::{Arc, Mutex, MutexGuard};

/// A handle on a request_response (std's `Arc`: the connection holds it as a [`RespPart`]
/// object).
pub(crate) type SlotRef = std::sync::Arc<ResponseSlot>;

enum Phase {
    /// Not polled yet: the request waits here.
    New(Option<Route>, Payload),
    /// Sent on stream `id`.
    Sent(u32),
    /// Resolved (the result may have been taken).
    Done,
}

struct State {
    phase: Phase,
    result: Option<Result<Payload, RSocketError>>,
    waker: Option<Waker>,
    /// The responder's task computing the answer.
    task: Option<tokio::task::AbortHandle>,
}

/// One request_response, on either side.
pub(crate) struct ResponseSlot {
    conn: Arc<Conn>,
    state: Mutex<State>,
}

impl std::fmt::Debug for ResponseSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseSlot").finish_non_exhaustive()
    }
}

impl ResponseSlot {
    fn new(conn: Arc<Conn>, phase: Phase) -> SlotRef {
        std::sync::Arc::new(ResponseSlot {
            conn,
            state: Mutex::new(State {
                phase,
                result: None,
                waker: None,
                task: None,
            }),
        })
    }

    /// The responder's side of stream `id`, whose answer runs as `task`.
    pub(crate) fn responder(conn: Arc<Conn>, id: u32) -> SlotRef {
        Self::new(conn, Phase::Sent(id))
    }

    pub(crate) fn set_task(&self, task: tokio::task::AbortHandle) {
        let mut s = self.state.lock();
        if matches!(s.phase, Phase::Done) {
            task.abort();
        } else {
            s.task = Some(task);
        }
    }

    // --- the writer's side

    /// Opens the request (see [`RespPart::open_with`]): `open` runs under this slot's
    /// lock, so the requester's drop ([`abandon`](Self::abandon)) either comes first (the
    /// phase is `Done`: nothing is opened) or finds the request sent on its id (it then
    /// takes the stream out and sends CANCEL, after the request). One lock for what took
    /// two (the request taken, then the id recorded).
    pub(crate) fn open_with(
        &self,
        open: &mut dyn FnMut() -> Result<u32, RSocketError>,
    ) -> Option<(u32, Option<Route>, Payload)> {
        let mut s = self.state.lock();
        if !matches!(s.phase, Phase::New(..)) {
            return None;
        }
        let Phase::New(route, payload) = std::mem::replace(&mut s.phase, Phase::Done) else {
            return None;
        };
        // The broken twin of the loom model `rsocket::response_dropped_while_opening`: the
        // lock is let go while the id is allocated, and the id recorded whatever happened.
        if fault::active(Fault::ResponseOpenSplit) {
            drop(s);
            let opened = open();
            s = self.state.lock();
            if let Ok(id) = opened {
                s.phase = Phase::Sent(id);
                return Some((id, route, payload));
            }
            return None;
        }
        match open() {
            Ok(id) => {
                s.phase = Phase::Sent(id);
                Some((id, route, payload))
            }
            Err(e) => {
                settle(s, Err(e));
                None
            }
        }
    }

    // --- the reader's side (requester)

    /// The answer arrived (or the stream failed).
    pub(crate) fn resolve(&self, result: Result<Payload, RSocketError>) {
        let mut s = self.state.lock();
        if matches!(s.phase, Phase::Done) {
            return;
        }
        s.phase = Phase::Done;
        settle(s, result);
    }

    /// The connection ended, or the peer's ERROR / CANCEL.
    pub(crate) fn fail(&self, error: RSocketError) {
        self.resolve(Err(error));
    }

    /// The responder's answer is ready: `true` if it should be sent (no CANCEL came first).
    pub(crate) fn answered(&self) -> bool {
        let mut s = self.state.lock();
        if matches!(s.phase, Phase::Done) {
            return false;
        }
        s.phase = Phase::Done;
        {
            s.task = None;
        }
        true
    }

    /// The requester's future was dropped unresolved.
    fn abandon(&self) {
        let mut s = self.state.lock();
        let phase = std::mem::replace(&mut s.phase, Phase::Done);
        drop(s);
        if let Phase::Sent(id) = phase {
            if self.conn.table.remove(id).is_some() {
                self.conn.send(Frame::Cancel { id });
            }
        }
    }
}

/// The answer to a request_response: a future resolving to the response payload.
///
/// Sends the request when first polled. Resolves to the payload of the responder's answer,
/// or to an error: the responder's ERROR ([`RSocketError::Remote`] with its code), the end of
/// the connection, or a request that could not be sent (no lease, too many streams).
///
/// # Cancel safety
///
/// Dropping an unresolved `Response` cancels the request: CANCEL goes to the responder if
/// the request went out, and the answer, if it comes, is ignored.
#[must_use = "a Response does nothing unless awaited"]
pub struct Response {
    slot: SlotRef,
    sent: bool,
    done: bool,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("done", &self.done)
            .finish()
    }
}

impl Response {
    pub(crate) fn new(conn: Arc<Conn>, route: Option<Route>, payload: Payload) -> Self {
        Response {
            slot: ResponseSlot::new(conn, Phase::New(route, payload)),
            sent: false,
            done: false,
        }
    }
}

impl Future for Response {
    type Output = Result<Payload, RSocketError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let slot = &this.slot;
        let mut s = slot.state.lock();
        if let Some(r) = s.result.take() {
            drop(s);
            this.done = true;
            return Poll::Ready(r);
        }
        if matches!(s.phase, Phase::Done) {
            drop(s);
            this.done = true;
            return Poll::Ready(Err(RSocketError::Closed(
                "the response was already taken".into(),
            )));
        }
        match &s.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => s.waker = Some(cx.waker().clone()),
        }
        drop(s);
        let first = !std::mem::replace(&mut this.sent, true);
        if first
            && !slot
                .conn
                .outbox
                .push(Out::Open(Opening::Response(slot.clone())))
        {
            let e = slot
                .conn
                .close_reason()
                .unwrap_or_else(|| RSocketError::Closed("the connection is closed".into()));
            slot.resolve(Err(e));
        }
        Poll::Pending
    }
}

impl Drop for Response {
    fn drop(&mut self) {
        if !self.done {
            self.slot.abandon();
        }
    }
}

impl RespPart for ResponseSlot {
    fn open_with(
        &self,
        open: &mut dyn FnMut() -> Result<u32, RSocketError>,
    ) -> Option<(u32, Option<Route>, Payload)> {
        ResponseSlot::open_with(self, open)
    }
    fn resolve(&self, result: Result<Payload, RSocketError>) {
        ResponseSlot::resolve(self, result)
    }
    fn fail(&self, error: RSocketError) {
        ResponseSlot::fail(self, error)
    }
}

/// The end of a request_response whose phase is `Done`: records `result`, lets go of the
/// lock, then aborts the responder's task (if any) and wakes the requester's future (if it
/// waits). Used by [`ResponseSlot::resolve`] and by an opening that failed.
#[inline(always)]
fn settle(mut s: MutexGuard<'_, State>, result: Result<Payload, RSocketError>) {
    s.result = Some(result);
    let task = s.task.take();
    let w = s.waker.take();
    drop(s);
    if let Some(t) = task {
        t.abort();
    }
    if let Some(w) = w {
        w.wake();
    }
}
