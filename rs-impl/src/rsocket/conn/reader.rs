//! The reader task: frames from the socket, through the codec, to the connection (its
//! control frames) or to their streams ([`dispatch`](crate::rsocket::dispatch)).
//!
//! Handles here: LEASE (the requester honours it), KEEPALIVE (answered when it asks), ERROR
//! on stream 0 (the peer ends the connection), METADATA_PUSH, RESUME (refused: resumption is
//! not supported), frames of unknown types (ignored with the I flag, a `CONNECTION_ERROR`
//! without), and the reassembly of fragments. Malformed frames end the connection with the
//! decoder's ERROR frame.
//!
//! With inbound lanes ([`lanes`](crate::rsocket::lanes)) the reader hands the frames of the
//! peer's streams to the lanes and goes on reading control frames while one waits for room;
//! it stops reading at the next frame for a lane.
//!
//! **One read, one pass (one lane).** The frames of one read are decoded straight from the
//! read buffer and handled one after the other on this task, each through a small
//! `poll_fn` ([`Reader::poll_whole`]) rather than a future of its own; a frame that must wait
//! (for room in the writer's queue, for its stream's `inbound_buffer`) stays in its slot
//! and the reader waits there, reading nothing more. A request_response whose handler is
//! ready at once is answered in this pass ([`dispatch`](crate::rsocket::dispatch)), and the
//! answers of the whole read go out in one write at its end
//! ([`flush_inline`](writer::flush_inline)). Counted on RemotePingPong (30 clients, 50 in
//! flight each, callgrind): 6,253 instructions per round trip before this pass and the
//! related changes of its commit, 5,462 after.

use std::collections::HashMap;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use futures::StreamExt;
use tokio::net::tcp::OwnedReadHalf;
use tokio_util::codec::{Decoder, FramedRead};

use super::Conn;
use crate::loom::sync::Arc;
use crate::rsocket::codec::{CodecError, FrameCodec};
use crate::rsocket::conn::writer::{self, Flushed, SharedWriter};
use crate::rsocket::dispatch::{Dispatch, Stop};
use crate::rsocket::error::{ErrorCode, RSocketError};
use crate::rsocket::frame::{Frame, FrameError};
use crate::rsocket::lanes::{Lanes, Route};
use crate::rsocket::payload::Payload;
use crate::rsocket::router::Router;

/// A payload being reassembled: the first frame (its payload taken out) and the parts.
struct Partial {
    head: Frame,
    metadata: Option<BytesMut>,
    data: BytesMut,
}

/// The reader's state.
pub(crate) struct Reader {
    pub(crate) conn: Arc<Conn>,
    dispatch: Dispatch,
    partials: HashMap<u32, Partial>,
    /// The inbound lanes (`None` with one lane: frames are handled here).
    lanes: Option<Lanes>,
}

impl Reader {
    /// The reader of `conn`; with `lanes` = `Some((n, capacity))` (n > 1), the stream frames
    /// go to `n` inbound lanes of `capacity` frames each (built here, on the current tokio
    /// runtime).
    pub(crate) fn new(
        conn: Arc<Conn>,
        router: Option<std::sync::Arc<Router>>,
        lanes: Option<(usize, usize)>,
    ) -> Self {
        let lanes = lanes.map(|(n, capacity)| Lanes::start(&conn, router.clone(), n, capacity));
        Reader {
            dispatch: Dispatch::new(conn.clone(), router),
            conn,
            partials: HashMap::new(),
            lanes,
        }
    }

    pub(crate) async fn room(&self) {
        self.conn.room().await
    }

    /// Handles one frame that [`reassemble`](Self::reassemble) made whole, without lanes
    /// (they need [`handle`](Self::handle)): `Pending` with the frame kept in `slot` while it
    /// waits (for room in the writer's queue, or in its stream's `inbound_buffer`), so that
    /// the reader's loop drives it with a small `poll_fn` instead of a future per frame.
    fn poll_whole(
        &mut self,
        cx: &mut Context<'_>,
        slot: &mut Option<Frame>,
    ) -> Poll<Result<(), Stop>> {
        debug_assert!(self.lanes.is_none());
        let needs_room = matches!(
            slot,
            Some(Frame::Keepalive { respond: true, .. } | Frame::MetadataPush { .. })
        );
        if needs_room {
            let limit = self.conn.config.control_queue;
            ready!(self.conn.outbox.poll_below(cx, limit));
        }
        if slot.as_ref().is_some_and(Frame::is_stream_frame) {
            return self.dispatch.poll_frame(cx, slot);
        }
        match slot.take() {
            None => Poll::Ready(Ok(())),
            Some(frame) => Poll::Ready(self.control(frame)),
        }
    }

    /// A frame that is not a stream's, once there is room for its answer.
    fn control(&mut self, frame: Frame) -> Result<(), Stop> {
        match frame {
            // "A server MUST ignore a SETUP frame after it has accepted a previous SETUP";
            // "a client MUST ignore a SETUP frame".
            Frame::Setup(_) => Ok(()),
            Frame::Lease {
                ttl_ms, requests, ..
            } => {
                let mut lease = self.conn.lease.lock();
                self.conn.enforce_lease(&mut lease);
                lease.expires = Some(Instant::now() + Duration::from_millis(ttl_ms as u64));
                lease.remaining = requests;
                let waiters = std::mem::take(&mut lease.waiters);
                drop(lease);
                waiters.into_iter().for_each(|w| w.wake());
                Ok(())
            }
            Frame::Keepalive { respond, data, .. } => {
                if respond {
                    self.conn.send(Frame::Keepalive {
                        respond: false,
                        position: 0,
                        data,
                    });
                }
                Ok(())
            }
            Frame::Error { id: 0, code, data } => {
                let message = String::from_utf8_lossy(&data).into_owned();
                self.conn.close(RSocketError::remote(code, message), None);
                Err(Stop)
            }
            Frame::MetadataPush { metadata } => {
                self.dispatch.metadata_push(metadata);
                Ok(())
            }
            Frame::Resume { resume: true } => {
                self.conn.fail(
                    ErrorCode::ConnectionError,
                    "RESUME on an established connection (resumption is not supported)".into(),
                );
                Err(Stop)
            }
            Frame::Resume { resume: false } | Frame::Unknown { ignore: true, .. } => Ok(()),
            Frame::Unknown { ty, .. } => {
                self.conn.fail(
                    ErrorCode::ConnectionError,
                    format!("unknown frame type 0x{ty:02X} without the IGNORE flag"),
                );
                Err(Stop)
            }
            // Stream frames go to `dispatch` (`poll_whole`, `stream_frame`).
            _ => Ok(()),
        }
    }

    /// Handles one frame.
    pub(crate) async fn handle(&mut self, frame: Frame) -> Result<(), Stop> {
        let mut slot = Some(frame);
        if let Err(e) = self.reassemble(&mut slot) {
            self.conn.fail(e.code, e.message);
            return Err(Stop);
        }
        let Some(frame) = slot else {
            return Ok(());
        };
        match frame {
            Frame::Keepalive { respond: true, .. } | Frame::MetadataPush { .. } => {
                self.room().await;
                self.control(frame)
            }
            frame if frame.is_stream_frame() => self.stream_frame(frame).await,
            control => self.control(control),
        }
    }

    /// A frame of a stream: to its lane, or handled here.
    async fn stream_frame(&mut self, frame: Frame) -> Result<(), Stop> {
        let frame = match &mut self.lanes {
            None => frame,
            Some(lanes) => match lanes.route(frame) {
                Route::Drop => return Ok(()),
                Route::Inline(frame) => frame,
                Route::Lane(frame) => {
                    if lanes.is_waiting() {
                        // A second frame for the lanes: stop reading until the first is in.
                        self.conn.outbox.uncork();
                        futures::future::poll_fn(|cx| lanes.poll_flush(cx)).await;
                    }
                    lanes.put(frame);
                    futures::future::poll_fn(|cx| {
                        let _ = lanes.poll_flush(cx);
                        Poll::Ready(())
                    })
                    .await;
                    return Ok(());
                }
            },
        };
        let mut slot = Some(frame);
        futures::future::poll_fn(|cx| self.dispatch.poll_frame(cx, &mut slot)).await
    }

    /// Fragments: the first frame with F starts a partial payload, PAYLOAD frames with F
    /// add to it, the first without F completes it. Leaves the whole frame in `slot` (the
    /// frame itself, without a fragment in progress or starting, or the reassembled one
    /// when complete), or `None` while fragments are awaited.
    #[inline]
    fn reassemble(&mut self, slot: &mut Option<Frame>) -> Result<(), FrameError> {
        // No fragment in progress and none starting: the frame is whole as it is (and stays
        // where it is).
        if self.partials.is_empty() && !slot.as_ref().is_some_and(Frame::follows) {
            return Ok(());
        }
        match slot.take() {
            Some(frame) => {
                *slot = self.reassemble_fragment(frame)?;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// [`reassemble`](Self::reassemble) once a fragment is in progress or starts.
    #[inline(never)]
    fn reassemble_fragment(&mut self, frame: Frame) -> Result<Option<Frame>, FrameError> {
        let (id, follows) = match &frame {
            Frame::RequestResponse { id, follows, .. }
            | Frame::RequestFnf { id, follows, .. }
            | Frame::RequestStream { id, follows, .. }
            | Frame::RequestChannel { id, follows, .. }
            | Frame::Payload { id, follows, .. } => (*id, *follows),
            Frame::Cancel { id } | Frame::Error { id, .. } => {
                self.partials.remove(id);
                return Ok(Some(frame));
            }
            _ => return Ok(Some(frame)),
        };
        let continuing = self.partials.contains_key(&id);
        if !continuing && !follows {
            return Ok(Some(frame));
        }
        let (last_complete, last_next) = match &frame {
            Frame::Payload { complete, next, .. } => (*complete, *next),
            _ => (false, false),
        };
        if continuing && !matches!(frame, Frame::Payload { .. }) {
            return Err(FrameError::connection(format!(
                "a request frame on stream {id} while a fragmented payload is reassembled"
            )));
        }
        let (head, payload) = take_payload(frame);
        if !continuing {
            if self.partials.len() >= self.conn.config.max_streams {
                return Err(FrameError::connection(
                    "more fragmented payloads at once than the stream limit",
                ));
            }
            self.partials.insert(
                id,
                Partial {
                    head,
                    metadata: payload.metadata.as_deref().map(BytesMut::from),
                    data: BytesMut::from(&payload.data[..]),
                },
            );
            return self.check_size(id).map(|()| None);
        }
        let p = self.partials.get_mut(&id).expect("a partial payload");
        if let Some(m) = &payload.metadata {
            p.metadata.get_or_insert_with(BytesMut::new).put_slice(m);
        }
        p.data.put_slice(&payload.data);
        self.check_size(id)?;
        if follows {
            return Ok(None);
        }
        let p = self.partials.remove(&id).expect("a partial payload");
        let whole = Payload {
            data: p.data.freeze(),
            metadata: p.metadata.map(BytesMut::freeze),
        };
        Ok(Some(finish_head(p.head, whole, last_complete, last_next)))
    }

    fn check_size(&self, id: u32) -> Result<(), FrameError> {
        let p = &self.partials[&id];
        let size = p.data.len() + p.metadata.as_ref().map_or(0, |m| m.len());
        if size > self.conn.config.max_payload {
            return Err(FrameError::connection(format!(
                "a fragmented payload on stream {id} exceeds the limit of {} bytes",
                self.conn.config.max_payload
            )));
        }
        Ok(())
    }
}

/// Splits a payload-bearing frame into its head (with an empty payload) and its payload.
fn take_payload(mut frame: Frame) -> (Frame, Payload) {
    let payload = match &mut frame {
        Frame::RequestResponse { payload, .. }
        | Frame::RequestFnf { payload, .. }
        | Frame::RequestStream { payload, .. }
        | Frame::RequestChannel { payload, .. }
        | Frame::Payload { payload, .. } => std::mem::take(payload),
        _ => Payload::default(),
    };
    (frame, payload)
}

/// The whole frame: the head with the reassembled payload and, from the last fragment, C
/// (and for a PAYLOAD, N).
fn finish_head(mut head: Frame, whole: Payload, last_complete: bool, last_next: bool) -> Frame {
    match &mut head {
        Frame::Payload {
            payload,
            follows,
            complete,
            next,
            ..
        } => {
            *payload = whole;
            *follows = false;
            *complete = last_complete;
            *next = last_next;
        }
        Frame::RequestChannel {
            payload,
            follows,
            complete,
            ..
        } => {
            *payload = whole;
            *follows = false;
            *complete |= last_complete;
        }
        Frame::RequestResponse {
            payload, follows, ..
        }
        | Frame::RequestFnf {
            payload, follows, ..
        }
        | Frame::RequestStream {
            payload, follows, ..
        } => {
            *payload = whole;
            *follows = false;
        }
        _ => {}
    }
    head
}

/// Whether the read buffer holds another whole frame.
fn whole_frame_buffered(buf: &BytesMut) -> bool {
    buf.len() >= 3 && {
        let len = ((buf[0] as usize) << 16) | ((buf[1] as usize) << 8) | buf[2] as usize;
        buf.len() >= 3 + len
    }
}

/// Runs the reader until the connection closes. After the frames of each read, what they
/// queued is written on this task if the writer task is idle
/// ([`flush_inline`](writer::flush_inline)).
///
/// Without lanes, the frames of one read are decoded and handled in one go, straight from
/// the read buffer (each frame through a small `poll_fn`, no future per frame): the codec's
/// stream is polled only when the buffer holds no whole frame.
pub(crate) async fn run(
    conn: Arc<Conn>,
    mut frames: FramedRead<OwnedReadHalf, FrameCodec>,
    router: Option<std::sync::Arc<Router>>,
    lanes: Option<(usize, usize)>,
    out: SharedWriter,
) {
    let mut reader = Reader::new(conn.clone(), router, lanes);
    let mut codec = frames.decoder().clone();
    let (mut frames_in, mut corked) = (0u64, false);
    loop {
        let next = match reader.lanes.as_mut() {
            // A frame waits for room in the lanes: read (control frames) meanwhile.
            Some(lanes) if lanes.is_waiting() => {
                futures::future::poll_fn(|cx| {
                    let _ = lanes.poll_flush(cx);
                    frames.poll_next_unpin(cx)
                })
                .await
            }
            _ => frames.next().await,
        };
        let frame = match next {
            None => {
                conn.close(
                    RSocketError::Closed("the peer closed the connection".into()),
                    None,
                );
                return;
            }
            Some(Err(e)) => return codec_error(&conn, e),
            Some(Ok(frame)) => frame,
        };
        frames_in += 1;
        // The answers to the frames of one read go out in one write: the writer is woken
        // once no whole frame is left in the read buffer.
        if !corked {
            conn.outbox.cork();
            corked = true;
        }
        if reader.lanes.is_some() {
            conn.received(frames_in);
            if reader.handle(frame).await.is_err() {
                return;
            }
        } else {
            // This frame and every whole frame after it in the read buffer.
            let mut next = Some(frame);
            while let Some(frame) = next.take() {
                let mut slot = Some(frame);
                if let Err(e) = reader.reassemble(&mut slot) {
                    conn.fail(e.code, e.message);
                    return;
                }
                if slot.is_some() {
                    let done = futures::future::poll_fn(|cx| reader.poll_whole(cx, &mut slot));
                    if done.await.is_err() {
                        return;
                    }
                }
                match codec.decode(frames.read_buffer_mut()) {
                    Ok(Some(frame)) => {
                        frames_in += 1;
                        next = Some(frame);
                    }
                    Ok(None) => {}
                    Err(e) => return codec_error(&conn, e),
                }
            }
            conn.received(frames_in);
        }
        if !whole_frame_buffered(frames.read_buffer()) {
            // The answers to this read go out now, on this task, unless the writer task is
            // busy (it takes them) or the socket is full (it is woken for the rest).
            if writer::flush_inline(&conn, &out) == Flushed::Rest {
                conn.outbox.kick();
            }
            conn.outbox.uncork();
            corked = false;
        }
    }
}

/// Ends the connection for what the codec reported.
fn codec_error(conn: &Conn, e: CodecError) {
    match e {
        CodecError::Frame(e) => conn.fail(e.code, e.message),
        CodecError::Io(e) => conn.close(RSocketError::from(e), None),
    }
}
