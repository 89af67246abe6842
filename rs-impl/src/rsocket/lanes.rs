//! A server connection's inbound lanes (seed 004: Artery's inbound lanes, a connection's
//! inbound stream fanned across lanes keyed by the recipient), on the keyed-lanes operator
//! of [`crate::lanes`].
//!
//! # Contract
//!
//! * **Which frames.** With [`ServerConfig::lanes`] = n > 1, the peer's requests
//!   (REQUEST_STREAM, REQUEST_CHANNEL, REQUEST_RESPONSE, REQUEST_FNF) go to lane
//!   `lane_of(murmur2(route), n)` ([`crate::lanes::lane_of`]: Kafka's partitioner over the
//!   route's UTF-8 bytes; a request without a route has the route `""`), and the frames that
//!   follow on the peer's streams (REQUEST_N, CANCEL, PAYLOAD, ERROR) go to the lane of
//!   their stream's route. So each stream's frames, and the requests of one route, are
//!   handled in wire order; frames of routes on different lanes have no order between them.
//!   Control frames (SETUP, KEEPALIVE, LEASE, METADATA_PUSH, ERROR on stream 0, RESUME) never
//!   enter a lane: the reader handles them, also while a lane is full. Frames for this
//!   side's own requests, and frames for a stream that has ended or was never opened, are
//!   handled by the reader too (ignored, or the connection's error).
//! * **Wire-order checks stay in the reader.** The reader accepts each request in wire order
//!   (stream id parity and growth) and records its route's hash in the stream table before
//!   the request enters its lane ([`StreamTable::accept_remote`]), so lanes may open
//!   streams out of wire order across lanes, and a frame for a stream id the peer never
//!   opened is still a `CONNECTION_ERROR`.
//! * **Bounded, and a full lane stops the socket.** The reader hands frames to the lanes
//!   through a [`push`] source of capacity 0 (a frame goes only against demand): at most
//!   one frame waits in the reader for room. While it waits, the reader goes on reading and
//!   handling control frames, and stops reading at the next frame for a lane: TCP holds the
//!   rest. Behind it: the upstream island's input buffer of [`LANE_INPUT_BUFFER`] frames, each
//!   lane's ring of `lane_capacity` frames ([`ServerConfig::lane_capacity`]), and each lane
//!   handler's [`LANE_CREDIT`] frames requested and not yet handled. A lane is full when
//!   its handler is slow or waits (for the writer's queue below `control_queue`, for a
//!   stream's `inbound_buffer`): as in Pekko's partition hub, a full lane holds back every
//!   frame behind it, whatever its lane (head-of-line blocking).
//! * **Where handlers run.** Each lane's frames are handled on the lane's island, a task
//!   of the tokio runtime the server runs on, so handlers of different lanes run in
//!   parallel; a lane that waited resumes on a task of its own.
//! * **Failure and end.** A lane that fails (it cannot fail by a handler: handlers' panics
//!   are answered on their stream) closes the connection with `ERROR[CONNECTION_ERROR]`.
//!   The connection's end ends the lanes: the reader completes their source, and what they
//!   still hold meets a closed connection (requests are dropped, as on a connection that
//!   closed while they were on the wire).
//! * **One lane builds nothing:** with `lanes = 1` none of this exists (no source, no
//!   island, no allocation); the reader hands every frame to its own [`Dispatch`] inline.
//!
//! [`ServerConfig::lanes`]: super::ServerConfig::lanes
//! [`ServerConfig::lane_capacity`]: super::ServerConfig::lane_capacity
//! [`StreamTable::accept_remote`]: super::table::StreamTable::accept_remote
//! [`push`]: crate::source::push

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc as StdArc, Weak};
use std::task::{Context, Poll};

use futures::task::{waker_ref, ArcWake};
use futures::Sink;
use rs_api::{BoxSubscriber, Error, Subscriber, SubscriptionRef};

use super::conn::Conn;
use super::dispatch::{Dispatch, Stop};
use super::error::ErrorCode;
use super::frame::Frame;
use super::metadata;
use super::router::Router;
use crate::flow::Flow;
use crate::island::Runtime;
use crate::lanes::{murmur2, KeyHash, LaneDepths, LanesConfig};
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::{Arc, Mutex};
use crate::serial::DrainLoop;
use crate::source::{push, PushSender};

/// Frames the lanes' upstream island reads ahead from the reader.
pub const LANE_INPUT_BUFFER: usize = 16;

/// Frames each lane's handler requests from its lane at once: it holds at most this many
/// frames it has not handled yet, and asks for more after handling half.
pub const LANE_CREDIT: usize = 16;

/// A frame on its way to a lane, with its lane key (the hash of its stream's route).
pub(crate) struct LaneFrame {
    key: u32,
    frame: Frame,
}

/// Where the reader sends a stream frame.
pub(crate) enum Route {
    /// To a lane.
    Lane(LaneFrame),
    /// To the reader's own dispatch (a frame of no lane).
    Inline(Frame),
    /// Nowhere: a request on an id already used (the spec's "MUST be ignored"), or the
    /// connection closed.
    Drop,
}

/// The lane key of a request: the murmur2 hash of its route's bytes (`""` without one).
fn route_key(frame: &Frame) -> u32 {
    let payload = match frame {
        Frame::RequestStream { payload, .. }
        | Frame::RequestChannel { payload, .. }
        | Frame::RequestResponse { payload, .. }
        | Frame::RequestFnf { payload, .. } => payload,
        _ => return murmur2(b""),
    };
    let route = payload
        .metadata
        .as_deref()
        .and_then(|m| metadata::route(m).ok().flatten())
        .unwrap_or("");
    murmur2(route.as_bytes())
}

/// The reader's end of a connection's lanes.
pub(crate) struct Lanes {
    conn: Arc<Conn>,
    sink: PushSender<LaneFrame>,
    /// The frame waiting for room (at most one).
    pending: Option<LaneFrame>,
}

impl std::fmt::Debug for Lanes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes")
            .field("pending", &self.pending.is_some())
            .finish_non_exhaustive()
    }
}

impl Lanes {
    /// Builds and starts `n` lanes of `capacity` frames for `conn` on the current tokio
    /// runtime: the source the reader sends into, the keyed-lanes operator, and one
    /// handler per lane.
    pub(crate) fn start(
        conn: &Arc<Conn>,
        router: Option<StdArc<Router>>,
        n: usize,
        capacity: usize,
    ) -> Lanes {
        let (sink, publisher) = push::<LaneFrame>(0);
        let handle = tokio::runtime::Handle::current();
        let handlers: Vec<BoxSubscriber<LaneFrame>> = (0..n)
            .map(|_| {
                Box::new(LaneHandler::new(
                    Dispatch::lane(conn.clone(), router.clone()),
                    handle.clone(),
                )) as BoxSubscriber<LaneFrame>
            })
            .collect();
        let depths = LaneDepths::new();
        let started = Flow::from_publisher_with(publisher, LANE_INPUT_BUFFER).subscribe_lanes(
            &Runtime::tokio(handle),
            LanesConfig::new(n).capacity(capacity).depths(&depths),
            |f: &LaneFrame| KeyHash(f.key),
            |lane| lane,
            handlers,
        );
        debug_assert!(started.is_ok(), "n > 1 handlers were given");
        conn.set_lanes(n, depths);
        Lanes {
            conn: conn.clone(),
            sink,
            pending: None,
        }
    }

    /// Where `frame` goes: requests are accepted (in wire order) and keyed by their route;
    /// frames on the peer's streams follow their stream's key.
    pub(crate) fn route(&self, frame: Frame) -> Route {
        let table = &self.conn.table;
        match &frame {
            Frame::RequestStream { id, .. }
            | Frame::RequestChannel { id, .. }
            | Frame::RequestResponse { id, .. }
            | Frame::RequestFnf { id, .. } => {
                let key = route_key(&frame);
                match table.accept_remote(*id, key) {
                    Ok(()) => Route::Lane(LaneFrame { key, frame }),
                    Err(_) => Route::Drop,
                }
            }
            Frame::RequestN { id, .. }
            | Frame::Cancel { id }
            | Frame::Payload { id, .. }
            | Frame::Error { id, .. }
                if *id != 0 =>
            {
                match table.lane(*id) {
                    Some(key) => Route::Lane(LaneFrame { key, frame }),
                    None => Route::Inline(frame),
                }
            }
            _ => Route::Inline(frame),
        }
    }

    /// Whether a frame waits for room.
    pub(crate) fn is_waiting(&self) -> bool {
        self.pending.is_some()
    }

    /// Queues `frame` behind the one waiting (the caller waits for
    /// [`poll_flush`](Self::poll_flush) first when one waits).
    pub(crate) fn put(&mut self, frame: LaneFrame) {
        debug_assert!(self.pending.is_none());
        self.pending = Some(frame);
    }

    /// Hands the waiting frame to the lanes: `Ready` once none waits.
    pub(crate) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.pending.is_none() {
            return Poll::Ready(());
        }
        match Pin::new(&mut self.sink).poll_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => {
                let frame = self.pending.take().expect("a waiting frame");
                // Refused only once the lanes are gone: the connection is closing.
                let _ = Pin::new(&mut self.sink).start_send(frame);
                Poll::Ready(())
            }
            Poll::Ready(Err(_)) => {
                self.pending = None;
                Poll::Ready(())
            }
        }
    }
}

impl Drop for Lanes {
    /// The reader stops: the lanes end once they have handled what they hold.
    fn drop(&mut self) {
        self.pending = None;
        self.sink.complete();
    }
}

/// The lane handler's drainer state.
struct Handling {
    /// The frame being handled (kept while it waits).
    current: Option<Frame>,
    /// Frames handled since the last request.
    handled: usize,
    /// The lane ended, or the connection broke: everything left is dropped.
    done: bool,
}

/// One lane's end: a subscriber that hands each frame to its [`Dispatch`], in order,
/// asking the lane for [`LANE_CREDIT`] frames at a time.
struct Handler {
    me: Weak<Handler>,
    dispatch: Dispatch,
    /// Frames delivered and not yet taken by the drainer (at most [`LANE_CREDIT`]).
    inbox: Mutex<VecDeque<Frame>>,
    subscription: Mutex<Option<SubscriptionRef>>,
    ended: AtomicBool,
    drain: DrainLoop<Handling>,
    /// Where a lane that waited resumes.
    runtime: tokio::runtime::Handle,
}

impl Handler {
    fn run(&self) {
        self.drain.drain(|h| self.pass(h));
    }

    fn pass(&self, h: &mut Handling) {
        let Some(me) = self.me.upgrade() else {
            return;
        };
        let waker = waker_ref(&me);
        let mut cx = Context::from_waker(&waker);
        loop {
            if !h.done && self.ended.load(Ordering::Acquire) {
                h.done = true;
            }
            if h.done {
                h.current = None;
                self.inbox.lock().clear();
                return;
            }
            if h.current.is_none() {
                h.current = self.inbox.lock().pop_front();
                if h.current.is_none() {
                    return;
                }
            }
            match self.dispatch.poll_frame(&mut cx, &mut h.current) {
                Poll::Pending => return,
                Poll::Ready(Err(Stop)) => {
                    // The connection broke (it is closed already): stop taking frames.
                    h.done = true;
                    if let Some(s) = self.subscription.lock().take() {
                        s.cancel();
                    }
                }
                Poll::Ready(Ok(())) => {
                    h.handled += 1;
                    if h.handled >= LANE_CREDIT / 2 {
                        let n = std::mem::take(&mut h.handled) as u64;
                        let s = self.subscription.lock().clone();
                        if let Some(s) = s {
                            s.request(n);
                        }
                    }
                }
            }
        }
    }
}

impl ArcWake for Handler {
    /// The lane waited (for the writer's queue, or a stream's buffer) and may go on: it
    /// resumes on a task of its own, not on the thread that woke it.
    fn wake_by_ref(arc_self: &StdArc<Self>) {
        let me = arc_self.clone();
        drop(arc_self.runtime.spawn(async move { me.run() }));
    }
}

/// The subscriber at the end of a lane.
struct LaneHandler(StdArc<Handler>);

impl LaneHandler {
    fn new(dispatch: Dispatch, runtime: tokio::runtime::Handle) -> Self {
        LaneHandler(StdArc::new_cyclic(|me| Handler {
            me: me.clone(),
            dispatch,
            inbox: Mutex::new(VecDeque::with_capacity(LANE_CREDIT)),
            subscription: Mutex::new(None),
            ended: AtomicBool::new(false),
            drain: DrainLoop::new(Handling {
                current: None,
                handled: 0,
                done: false,
            }),
            runtime,
        }))
    }

    fn end(&self) {
        self.0.ended.store(true, Ordering::Release);
        self.0.subscription.lock().take();
        self.0.run();
    }
}

impl Subscriber<LaneFrame> for LaneHandler {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        *self.0.subscription.lock() = Some(subscription.clone());
        subscription.request(LANE_CREDIT as u64);
    }

    fn on_next(&mut self, item: LaneFrame) {
        self.0.inbox.lock().push_back(item.frame);
        self.0.run();
    }

    fn on_error(&mut self, error: Error) {
        let conn = self.0.dispatch.conn();
        if !conn.is_closed() {
            conn.fail(
                ErrorCode::ConnectionError,
                format!("an inbound lane failed: {error}"),
            );
        }
        self.end();
    }

    /// The reader stopped (the connection is closed): the frames still here meet the
    /// closed connection.
    fn on_complete(&mut self) {
        self.0.subscription.lock().take();
        self.0.run();
    }
}
