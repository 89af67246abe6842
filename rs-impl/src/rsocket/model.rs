//! The connection's stream table and its streams driven by hand, without sockets or tokio:
//! the loom models' handle (`rs-impl/tests/loom/rsocket.rs`). Loom builds only; not API.
//!
//! Each method runs the real code of one task of a connection: [`Model::request_response`]
//! a requester's first poll of a `Response`, [`Model::writer`] the
//! writer's handling of its queue (opening requests, credit, cancel, elements),
//! [`Model::payload`] and [`Model::request_n`] the reader's dispatch of a PAYLOAD and a
//! REQUEST_N, [`Model::close`] the connection's end.

use std::future::Future;
use std::task::{Context, Poll};

use rs_api::{BoxSubscriber, Publisher};

use super::config::ConnectionConfig;
use super::conn::{writer, Conn};
use super::error::RSocketError;
use super::frame::Frame;
use super::inbound::Inbound;
use super::part::Request;
use super::payload::Payload;
use super::pump::Pump;
use super::response::Response;
use super::table::{Role, Slot};
use crate::loom::sync::Arc;

/// A frame the writer would send, reduced to what the models check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// A request opening stream `id`.
    Request(u32),
    /// REQUEST_N.
    RequestN(u32, u32),
    /// CANCEL.
    Cancel(u32),
    /// PAYLOAD with N.
    Next(u32),
    /// PAYLOAD with C only.
    Complete(u32),
    /// ERROR on a stream.
    Error(u32),
    /// Anything else.
    Other,
}

/// One connection's shared state.
#[derive(Debug, Clone)]
pub struct Model {
    conn: Arc<Conn>,
}

/// A requester's stream (its subscriber was handed to [`Model::request_stream`]).
#[derive(Debug, Clone)]
pub struct Stream(std::sync::Arc<Inbound>);

impl Stream {
    /// The stream id (0 until the writer opened it).
    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Model {
    /// A client's connection (odd stream ids), small limits.
    pub fn client() -> Self {
        Self::new(Role::Client)
    }

    /// A server's connection (even stream ids).
    pub fn server() -> Self {
        Self::new(Role::Server)
    }

    fn new(role: Role) -> Self {
        let mut c = ConnectionConfig::default();
        c.stream_window = 2;
        c.inbound_buffer = 2;
        Model {
            conn: Arc::new(Conn::new(role, c)),
        }
    }

    /// A request_stream whose subscriber is `subscriber` (`on_subscribe` on this thread).
    pub fn request_stream(&self, subscriber: BoxSubscriber<Payload>) -> Stream {
        let inbound = Inbound::requester(
            self.conn.clone(),
            Request::Stream {
                route: None,
                payload: Payload::default(),
            },
        );
        inbound.start(subscriber);
        Stream(inbound)
    }

    /// A request_response, polled once on this thread (so queued for the writer): the
    /// `Response` to drop (a cancel) or to keep.
    pub fn request_response(&self) -> Response {
        let mut response = Response::new(self.conn.clone(), None, Payload::default());
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let polled = std::pin::Pin::new(&mut response).poll(&mut cx);
        assert!(polled.is_pending(), "a request_response resolved unsent");
        response
    }

    /// The writer: takes everything queued and handles it as the writer task does; returns
    /// the frames it would write.
    pub fn writer(&self) -> Vec<Wire> {
        let mut batch = std::collections::VecDeque::new();
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        match self.conn.outbox.poll_take(&mut cx, &mut batch) {
            Poll::Ready(None) => {}
            _ => return Vec::new(),
        }
        let mut written = Vec::new();
        let mut out = Vec::new();
        for item in batch {
            if let Some((frame, then)) = writer::item_frame(&self.conn, item, &mut written) {
                out.push(wire(&frame));
                if let Some((input, pump)) = then {
                    input.subscribe(Box::new(Pump::subscriber(&pump)));
                }
            }
        }
        for (pump, k) in written {
            pump.wrote(k);
        }
        out
    }

    /// The reader: a PAYLOAD(N) for stream `id`, dispatched as the reader does. `false` when
    /// the reader would have to wait for room.
    pub fn payload(&self, id: u32, data: &'static str) -> bool {
        let is_local = (id % 2 == 1) == (self.conn.role == super::table::Role::Client);
        let super::table::PayloadTarget::Inbound(inbound) =
            self.conn.table.payload_target(id, is_local)
        else {
            return true;
        };
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut p = Some(Payload::from(data));
        inbound.poll_next(&mut cx, &mut p).is_ready()
    }

    /// The reader: the peer's request_stream on `id` with initial credit `n`, served by
    /// `publisher` (subscribed on this thread).
    pub fn serve_stream(&self, id: u32, n: u32, publisher: &dyn Publisher<Payload>) {
        let pump = Pump::new(self.conn.clone(), id, n);
        let slot = Slot {
            outbound: Some(pump.clone() as super::part::OutRef),
            ..Slot::default()
        };
        self.conn.table.open_remote(id, slot).expect("a new stream");
        publisher.subscribe(Box::new(Pump::subscriber(&pump)));
    }

    /// The reader: the peer's REQUEST_N on `id`, dispatched as the reader does.
    pub fn request_n(&self, id: u32, n: u32) {
        if let Some(pump) = self.conn.table.outbound(id) {
            pump.grant(n);
        }
    }

    /// The connection's end.
    pub fn close(&self) {
        self.conn.close(
            RSocketError::Closed("the model closed the connection".into()),
            None,
        );
    }

    /// Streams in the table.
    pub fn streams(&self) -> usize {
        self.conn.table.len()
    }
}

fn wire(f: &Frame) -> Wire {
    match f {
        Frame::RequestStream { id, .. }
        | Frame::RequestChannel { id, .. }
        | Frame::RequestResponse { id, .. }
        | Frame::RequestFnf { id, .. } => Wire::Request(*id),
        Frame::RequestN { id, n } => Wire::RequestN(*id, *n),
        Frame::Cancel { id } => Wire::Cancel(*id),
        Frame::Payload { id, next: true, .. } => Wire::Next(*id),
        Frame::Payload { id, .. } => Wire::Complete(*id),
        Frame::Error { id, .. } => Wire::Error(*id),
        _ => Wire::Other,
    }
}
