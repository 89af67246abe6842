//! Where the peer's stream frames reach their streams: the one place request frames are
//! handed to a handler and PAYLOAD, REQUEST_N, CANCEL and stream ERROR frames to the stream
//! they belong to.
//!
//! **Lanes.** One `Dispatch` handles the frames of one lane. With one lane, the default
//! ([`ServerConfig::lanes`]), the reader task calls it inline: no stage, no queue. With more,
//! a server connection's inbound lanes ([`lanes`](super::lanes)) put one `Dispatch` at the
//! end of each lane, keyed by the hash of the request's route, and each stream's later
//! frames (PAYLOAD, REQUEST_N, CANCEL, ERROR) follow their stream's lane; control frames
//! (SETUP, KEEPALIVE, LEASE, METADATA_PUSH, ERROR on stream 0) never reach this module.
//!
//! **Waiting.** [`Dispatch::poll_frame`] handles one frame, or returns `Pending` with the
//! frame kept: before a request while the writer's queue is at `control_queue`, and before
//! a PAYLOAD while its stream's `inbound_buffer` is full. Whoever calls it (the reader, a
//! lane) stops taking frames meanwhile.
//!
//! **Protocol checks.** A frame for a stream id that neither side has opened yet
//! (REQUEST_N, CANCEL, PAYLOAD, ERROR) is a `CONNECTION_ERROR`; one for a stream that has
//! ended is ignored (it crossed the end on the wire). An initial request n of 0 is answered
//! `ERROR[INVALID]` on its stream. A request beyond the LEASE this side granted is answered
//! `ERROR[REJECTED]`, as one beyond `max_streams`.
//!
//! [`ServerConfig::lanes`]: super::ServerConfig::lanes

use std::panic::AssertUnwindSafe;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use futures::FutureExt;
use rs_api::Error;

use super::conn::{end_slot, Conn};
use super::error::{ErrorCode, RSocketError};
use super::frame::Frame;
use super::inbound::Inbound;
use super::payload::Payload;
use super::pump::Pump;
use super::response::ResponseSlot;
use super::router::{Answer, ChannelInbound, Router};
use super::table::{Part, PayloadTarget, Refused, Slot};
use crate::loom::sync::Arc;
use crate::panics::panic_message;

/// The reader stops: the connection is closed.
pub(crate) struct Stop;

/// The dispatch of one connection's stream frames (one lane).
pub(crate) struct Dispatch {
    conn: Arc<Conn>,
    router: Option<std::sync::Arc<Router>>,
    /// One of several lanes: the reader accepted each request (and recorded its lane key)
    /// before it got here, and the key is settled once the request is handled.
    laned: bool,
}

impl Dispatch {
    pub(crate) fn new(conn: Arc<Conn>, router: Option<std::sync::Arc<Router>>) -> Self {
        Dispatch {
            conn,
            router,
            laned: false,
        }
    }

    /// The dispatch at the end of one of several lanes.
    pub(crate) fn lane(conn: Arc<Conn>, router: Option<std::sync::Arc<Router>>) -> Self {
        Dispatch {
            conn,
            router,
            laned: true,
        }
    }

    pub(crate) fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }

    pub(crate) fn metadata_push(&self, metadata: Bytes) {
        if let Some(r) = &self.router {
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| r.handle_push(metadata)));
        }
    }

    fn error(&self, id: u32, code: ErrorCode, message: impl Into<String>) {
        let message: String = message.into();
        self.conn.send(Frame::Error {
            id,
            code,
            data: Bytes::from(message),
        });
    }

    fn respond(conn: &Conn, id: u32, result: Result<Payload, Error>) {
        conn.send(match result {
            Ok(payload) => Frame::Payload {
                id,
                follows: false,
                complete: true,
                next: true,
                payload,
            },
            Err(e) => {
                let (code, message) = RSocketError::frame_of(&e);
                Frame::Error {
                    id,
                    code,
                    data: Bytes::from(message),
                }
            }
        });
    }

    /// A frame for an id nobody opened: the connection ends.
    fn unknown(&self, id: u32, what: &str) -> Result<(), Stop> {
        if self.conn.table.never_opened(id) {
            self.conn.fail(
                ErrorCode::ConnectionError,
                format!("{what} on stream {id}, which was never opened"),
            );
            return Err(Stop);
        }
        Ok(())
    }

    /// Whether a new request of the peer may be served; answers it otherwise.
    fn admit(&self, id: u32, answer: bool) -> Option<&Router> {
        let Some(router) = self.router.as_deref() else {
            if answer {
                self.error(id, ErrorCode::Rejected, "this endpoint serves no requests");
            }
            return None;
        };
        if !self.conn.admit() {
            if answer {
                self.error(id, ErrorCode::Rejected, "no LEASE allows this request");
            }
            return None;
        }
        Some(router)
    }

    fn refused(&self, id: u32, r: Refused) {
        if r == Refused::TooMany {
            self.error(
                id,
                ErrorCode::Rejected,
                format!(
                    "too many concurrent streams (the limit is {})",
                    self.conn.config.max_streams
                ),
            );
        }
    }

    /// Hands the stream frame in `slot` to its stream (or its request to its handler) and
    /// empties `slot`; `Pending` (the frame kept in `slot`, the waker registered) while the
    /// writer's queue is at `control_queue` before a request, or the stream's
    /// `inbound_buffer` is full before a PAYLOAD.
    pub(crate) fn poll_frame(
        &self,
        cx: &mut Context<'_>,
        slot: &mut Option<Frame>,
    ) -> Poll<Result<(), Stop>> {
        match slot {
            Some(
                Frame::RequestStream { .. }
                | Frame::RequestChannel { .. }
                | Frame::RequestResponse { .. }
                | Frame::RequestFnf { .. },
            ) => {
                ready!(self
                    .conn
                    .outbox
                    .poll_below(cx, self.conn.config.control_queue));
            }
            Some(Frame::Payload {
                id,
                complete,
                next,
                payload,
                ..
            }) if *id != 0 => match self.conn.table.payload_target(*id, self.is_local(*id)) {
                PayloadTarget::Inbound(inbound) => {
                    if *next {
                        let mut p = Some(std::mem::take(payload));
                        if inbound.poll_next(cx, &mut p).is_pending() {
                            *payload = p.expect("a waiting payload stays");
                            return Poll::Pending;
                        }
                    }
                    if *complete {
                        inbound.complete();
                    }
                    *slot = None;
                    return Poll::Ready(Ok(()));
                }
                PayloadTarget::Response(response) => {
                    // "If a PAYLOAD for a REQUEST_RESPONSE is received that does not have a
                    // COMPLETE flag set, the implementation MUST assume it is set".
                    let answer = if *next {
                        std::mem::take(payload)
                    } else {
                        Payload::default()
                    };
                    *slot = None;
                    response.resolve(Ok(answer));
                    return Poll::Ready(Ok(()));
                }
                PayloadTarget::None => {}
            },
            _ => {}
        }
        match slot.take() {
            Some(frame) => Poll::Ready(self.frame(frame)),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Handles one stream frame that needs no waiting (see [`Dispatch::poll_frame`]).
    fn frame(&self, frame: Frame) -> Result<(), Stop> {
        match frame {
            Frame::RequestStream { id, n, payload, .. } => {
                self.request_stream(id, n, payload);
                self.settle(id);
            }
            Frame::RequestChannel {
                id,
                n,
                complete,
                payload,
                ..
            } => {
                self.request_channel(id, n, complete, payload);
                self.settle(id);
            }
            Frame::RequestResponse { id, payload, .. } => {
                self.request_response(id, payload);
                self.settle(id);
            }
            Frame::RequestFnf { id, payload, .. } => {
                if self.conn.table.open_remote(id, Slot::default()).is_ok() {
                    if let Some(router) = self.admit(id, false) {
                        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            router.handle_fnf(payload)
                        }));
                    }
                }
                self.settle(id);
            }
            Frame::RequestN { id, n } => match self.conn.table.outbound(id) {
                Some(pump) => pump.grant(n),
                None => return self.unknown(id, "REQUEST_N"),
            },
            Frame::Cancel { id } => {
                if id == 0 {
                    return Ok(()); // "a CANCEL on an unknown stream id (including 0) MUST be ignored"
                }
                self.cancel(id)?;
            }
            Frame::Payload {
                id, next, payload, ..
            } => {
                if id == 0 {
                    return Ok(()); // "a PAYLOAD on stream 0 MUST be ignored"
                }
                return self.payload(id, next, payload);
            }
            Frame::Error { id, code, data } => {
                let message = String::from_utf8_lossy(&data).into_owned();
                match self.conn.table.remove(id) {
                    Some(slot) => end_slot(slot, &RSocketError::remote(code, message)),
                    None => return self.unknown(id, "ERROR"),
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A lane handled the request of `id`: its lane key leaves unless its stream is open.
    #[inline]
    fn settle(&self, id: u32) {
        if self.laned {
            self.conn.table.settle(id);
        }
    }

    fn request_stream(&self, id: u32, n: u32, payload: Payload) {
        let Some(router) = self.admit(id, true) else {
            return;
        };
        if n == 0 {
            return self.error(
                id,
                ErrorCode::Invalid,
                "REQUEST_STREAM with an initial n of 0",
            );
        }
        let pump = Pump::new(self.conn.clone(), id, n);
        let slot = Slot {
            outbound: Some(pump.clone()),
            ..Slot::default()
        };
        if let Err(r) = self.conn.table.open_remote(id, slot) {
            return self.refused(id, r);
        }
        match catch(|| router.handle_stream(payload)) {
            Ok(publisher) => publisher.subscribe(Box::new(Pump::subscriber(&pump))),
            Err(e) => {
                self.conn.table.remove(id);
                self.error(
                    id,
                    e.code().unwrap_or(ErrorCode::ApplicationError),
                    e.message(),
                );
            }
        }
    }

    fn request_channel(&self, id: u32, n: u32, complete: bool, payload: Payload) {
        let Some(router) = self.admit(id, true) else {
            return;
        };
        if n == 0 {
            return self.error(
                id,
                ErrorCode::Invalid,
                "REQUEST_CHANNEL with an initial n of 0",
            );
        }
        let pump = Pump::new(self.conn.clone(), id, n);
        let inbound = Inbound::responder(self.conn.clone(), id);
        let slot = Slot {
            inbound: Some(inbound.clone()),
            outbound: Some(pump.clone()),
            ..Slot::default()
        };
        if let Err(r) = self.conn.table.open_remote(id, slot) {
            return self.refused(id, r);
        }
        if complete {
            inbound.complete();
        }
        let input = ChannelInbound::new(inbound);
        match catch(|| router.handle_channel(payload, input)) {
            Ok(publisher) => publisher.subscribe(Box::new(Pump::subscriber(&pump))),
            Err(e) => {
                if let Some(slot) = self.conn.table.remove(id) {
                    end_slot(slot, &e);
                }
                self.error(
                    id,
                    e.code().unwrap_or(ErrorCode::ApplicationError),
                    e.message(),
                );
            }
        }
    }

    fn request_response(&self, id: u32, payload: Payload) {
        let Some(router) = self.admit(id, true) else {
            return;
        };
        // The id is recorded first (and checked); the answer's state enters the table only
        // if the answer is not ready at once.
        if let Err(r) = self.conn.table.open_remote(id, Slot::default()) {
            return self.refused(id, r);
        }
        let mut future = match catch(|| router.handle_response(payload)) {
            // A synchronous handler's answer (its panic is caught as the call's).
            Ok(Answer::Now(r)) => return Self::respond(&self.conn, id, r),
            Ok(Answer::Later(f)) => AssertUnwindSafe(f).catch_unwind(),
            Err(e) => return Self::respond(&self.conn, id, Err(e.into())),
        };
        // Most answers are ready at once: answer inline, without a task.
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        if let Poll::Ready(r) = future.poll_unpin(&mut cx) {
            return Self::respond(&self.conn, id, flatten(r));
        }
        let slot = ResponseSlot::responder(self.conn.clone(), id);
        let entry = Slot {
            response: Some(slot.clone()),
            ..Slot::default()
        };
        if !self.conn.table.insert_remote(id, entry) {
            return self.refused(id, Refused::TooMany);
        }
        let conn = self.conn.clone();
        let task_slot = slot.clone();
        let task = tokio::spawn(async move {
            let r = future.await;
            if task_slot.answered() {
                conn.table.finish(id, Part::Response);
                Self::respond(&conn, id, flatten(r));
            }
        });
        slot.set_task(task.abort_handle());
    }

    fn cancel(&self, id: u32) -> Result<(), Stop> {
        let Some(slot) = self.conn.table.get(id) else {
            return self.unknown(id, "CANCEL");
        };
        if !self.is_local(id) {
            // "Upon receiving a CANCEL, the stream is terminated on the Responder".
            if let Some(slot) = self.conn.table.remove(id) {
                if let Some(i) = &slot.inbound {
                    i.fail(
                        RSocketError::remote(ErrorCode::Canceled, "the requester cancelled").into(),
                    );
                }
                if let Some(p) = &slot.outbound {
                    p.cancel();
                }
                if let Some(r) = &slot.response {
                    r.fail(RSocketError::remote(
                        ErrorCode::Canceled,
                        "the requester cancelled",
                    ));
                }
            }
        } else if let Some(p) = slot.outbound {
            // The responder cancels this side's channel input only.
            p.cancel();
            self.conn.table.finish(id, Part::Outbound);
        }
        Ok(())
    }

    fn is_local(&self, id: u32) -> bool {
        (id % 2 == 1) == (self.conn.role == super::table::Role::Client)
    }

    /// A PAYLOAD for a stream without an inbound half (those wait in
    /// [`Dispatch::poll_frame`]): a request_response's answer, or a frame to ignore or refuse.
    fn payload(&self, id: u32, next: bool, payload: Payload) -> Result<(), Stop> {
        if self.is_local(id) {
            if let Some(response) = self.conn.table.take_response(id) {
                // "If a PAYLOAD for a REQUEST_RESPONSE is received that does not have a
                // COMPLETE flag set, the implementation MUST assume it is set".
                response.resolve(Ok(if next { payload } else { Payload::default() }));
                return Ok(());
            }
        }
        self.unknown(id, "PAYLOAD")
    }
}

fn catch<T>(f: impl FnOnce() -> Result<T, RSocketError>) -> Result<T, RSocketError> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(RSocketError::application(format!(
            "the handler panicked: {}",
            panic_message(&*p)
        )))
    })
}

fn flatten(
    r: Result<Result<Payload, Error>, Box<dyn std::any::Any + Send>>,
) -> Result<Payload, Error> {
    r.unwrap_or_else(|p| {
        Err(
            RSocketError::application(format!("the handler panicked: {}", panic_message(&*p)))
                .into(),
        )
    })
}
