//! The writer: takes what the outbox holds, encodes it with the frame codec into one
//! buffer, and writes the buffer to the socket; then tells each outbound stream how much of
//! it was written, which lets the stream ask its publisher for more.
//!
//! **Who writes.** The socket's write half, the codec and the buffer are one [`Writer`]
//! behind an async mutex, shared by the writer task and the reader task. When the reader
//! has handled the frames of one read, it writes what they queued itself if the writer is
//! idle ([`flush_inline`]: a non-blocking write, no task hop); whatever the socket does not
//! take at once, and everything queued from elsewhere (publishers, requests), the writer
//! task writes ([`run`]).
//!
//! **Why requests are not written through.** A request opened by a client's task could be
//! written by that task at once when the writer is idle, but a task has no "end of pass"
//! at which its requests could be written together: each request would be a write of its
//! own. Tried on RemotePingPong (30 clients, 50 in flight, `pingpong_counts`, counted with
//! `perf stat`): 1.02 `sendto` per round trip instead of 0.042 (one write per ~24 frames),
//! and 6.9 µs of CPU per round trip instead of 1.1. The writer task's wake-up is paid once
//! per batch (about 0.02 per round trip there, counted under callgrind), not once per request.
//!
//! **Bound and backpressure.** The buffer is written out whenever it reaches
//! `write_buffer` bytes (and after each batch), and nothing more is encoded until the
//! socket has taken it: a socket that does not drain stops the writer, the outbox's
//! producers stop at their bounds, and the publishers stop being asked. An inline flush
//! encodes at most `write_buffer` bytes (plus one frame) and leaves the rest to the task.
//!
//! The writer also opens this side's requests (stream ids are allocated here, so they go
//! out in increasing order) and drops the elements of streams cancelled while they waited.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use futures::future::{select, Either};
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio_util::codec::Encoder;

use super::Conn;
use crate::loom::sync::Arc;
use crate::rsocket::codec::FrameCodec;
use crate::rsocket::error::RSocketError;
use crate::rsocket::frame::Frame;
use crate::rsocket::outbox::{Opening, Out};
use crate::rsocket::part::{same, ChannelInput, Control, OutRef, Request};
use crate::rsocket::payload::Payload;
use crate::rsocket::pump::{Pump, PumpRef};
use crate::rsocket::table::Slot;

/// How long the writer tries to send the last frame (a connection ERROR) to a peer that may
/// not be reading any more.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The socket's write half and what the writer keeps between writes.
pub(crate) struct Writer {
    io: OwnedWriteHalf,
    codec: FrameCodec,
    /// Encoded frames not yet taken by the socket.
    buf: BytesMut,
    /// Items taken from the outbox and not yet encoded.
    batch: VecDeque<Out>,
    /// Elements of each outbound stream encoded into `buf`, reported once it is written.
    written: Vec<(OutRef, u64)>,
}

/// The writer, shared by the writer task and the reader task (see the module docs).
pub(crate) type SharedWriter = std::sync::Arc<tokio::sync::Mutex<Writer>>;

impl Writer {
    /// The writer of `io`, with a buffer for `config.write_buffer` bytes.
    pub(crate) fn shared(
        io: OwnedWriteHalf,
        codec: FrameCodec,
        write_buffer: usize,
    ) -> SharedWriter {
        std::sync::Arc::new(tokio::sync::Mutex::new(Writer {
            io,
            codec,
            buf: BytesMut::with_capacity(write_buffer.min(1 << 20) + 1024),
            batch: VecDeque::with_capacity(64),
            written: Vec::with_capacity(16),
        }))
    }

    /// Tells each outbound stream how many of its elements the socket took.
    fn report_written(&mut self) {
        for (pump, k) in self.written.drain(..) {
            pump.wrote(k);
        }
    }
}

/// What an inline flush did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flushed {
    /// Everything queued went to the socket (or nothing was queued).
    All,
    /// The writer task is writing (it takes what is queued), or the connection is closing.
    Busy,
    /// The socket took part of it: the writer task must write the rest.
    Rest,
}

/// The reader's flush after the frames of one read: if the writer task is idle, encodes
/// what the outbox holds (at most `write_buffer` bytes and one frame) and writes it with
/// a non-blocking write, on the reader's task. No task hop and no wake-up when the socket
/// takes it all, which it does unless it is full.
pub(crate) fn flush_inline(conn: &Arc<Conn>, writer: &SharedWriter) -> Flushed {
    let Ok(mut guard) = writer.try_lock() else {
        return Flushed::Busy;
    };
    let w = &mut *guard;
    if !w.buf.is_empty() || !w.batch.is_empty() {
        return Flushed::Rest;
    }
    if !conn.outbox.take_now(&mut w.batch) {
        return Flushed::Busy;
    }
    let limit = conn.config.write_buffer;
    while w.buf.len() < limit {
        let Some(item) = w.batch.pop_front() else {
            break;
        };
        encode_item(conn, item, &mut w.codec, &mut w.buf, &mut w.written);
    }
    while !w.buf.is_empty() {
        match w.io.try_write(&w.buf) {
            Ok(0) => break,
            Ok(n) => w.buf.advance(n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => {
                w.buf.clear();
                w.batch.clear();
                w.written.clear();
                conn.close(RSocketError::from(e), None);
                return Flushed::Busy;
            }
        }
    }
    if w.buf.is_empty() {
        w.buf.clear();
        w.report_written();
        if w.batch.is_empty() {
            return Flushed::All;
        }
    }
    Flushed::Rest
}

/// Runs the writer task until the connection closes.
pub(crate) async fn run(conn: Arc<Conn>, writer: SharedWriter) {
    let limit = conn.config.write_buffer;
    loop {
        let closed = futures::future::poll_fn(|cx| conn.outbox.poll_wait(cx)).await;
        let mut guard = writer.lock().await;
        let w = &mut *guard;
        if let Some(last) = closed {
            w.batch.clear();
            w.buf.clear();
            if let Some(frame) = last {
                let _ = w.codec.encode(frame, &mut w.buf);
                let _ = tokio::time::timeout(CLOSE_GRACE, w.io.write_all(&w.buf)).await;
            }
            let _ = tokio::time::timeout(CLOSE_GRACE, w.io.shutdown()).await;
            return;
        }
        // What an inline flush left.
        if !w.buf.is_empty() {
            if !write(&conn, &mut w.io, &mut w.buf).await {
                return;
            }
            w.report_written();
        }
        conn.outbox.take_now(&mut w.batch);
        if w.batch.len() < 8 {
            // Woken for a few items: let their producers run on and add to them, so that
            // one write carries more (a few items per write cost a syscall each).
            tokio::task::yield_now().await;
            conn.outbox.take_now(&mut w.batch);
        }
        while let Some(item) = w.batch.pop_front() {
            encode_item(&conn, item, &mut w.codec, &mut w.buf, &mut w.written);
            if w.buf.len() >= limit && !write(&conn, &mut w.io, &mut w.buf).await {
                return;
            }
        }
        if !w.buf.is_empty() && !write(&conn, &mut w.io, &mut w.buf).await {
            return;
        }
        w.report_written();
    }
}

/// Writes the buffer out, unless the connection closes first. `false` when the writer
/// should stop (the close then sends the last frame).
async fn write(conn: &Arc<Conn>, io: &mut OwnedWriteHalf, buf: &mut BytesMut) -> bool {
    let w = std::pin::pin!(io.write_all_buf(buf));
    let c = std::pin::pin!(futures::future::poll_fn(|cx| conn.outbox.poll_closed(cx)));
    match select(w, c).await {
        Either::Left((Ok(()), _)) => {
            buf.clear();
            true
        }
        Either::Left((Err(e), _)) => {
            conn.close(RSocketError::from(e), None);
            buf.clear();
            true // the next take sees the close
        }
        Either::Right(_) => {
            buf.clear();
            true
        }
    }
}

fn count(written: &mut Vec<(OutRef, u64)>, pump: &OutRef) {
    if let Some((last, k)) = written.last_mut() {
        if same(last, pump) {
            *k += 1;
            return;
        }
    }
    match written.iter_mut().find(|(p, _)| same(p, pump)) {
        Some((_, k)) => *k += 1,
        None => written.push((pump.clone(), 1)),
    }
}

fn encode_item(
    conn: &Arc<Conn>,
    item: Out,
    codec: &mut FrameCodec,
    buf: &mut BytesMut,
    written: &mut Vec<(OutRef, u64)>,
) {
    if let Some((frame, then)) = item_frame(conn, item, written) {
        let _ = codec.encode(frame, buf);
        if let Some((input, pump)) = then {
            input.subscribe(Box::new(Pump::subscriber(&pump)));
        }
    }
}

/// The frame an outbox item becomes (none for an element of a cancelled stream, a credit
/// item with nothing to send, a request cancelled before it went out), and for a channel's
/// opening the input publisher to subscribe once the request is written.
pub(crate) fn item_frame(
    conn: &Arc<Conn>,
    item: Out,
    written: &mut Vec<(OutRef, u64)>,
) -> Option<(Frame, Option<ChannelStart>)> {
    let frame = match item {
        Out::Frame(f) => f,
        Out::Next(pump, payload) => {
            count(written, &pump);
            if !pump.is_live() {
                return None;
            }
            Frame::Payload {
                id: pump.id(),
                follows: false,
                complete: false,
                next: true,
                payload,
            }
        }
        Out::Complete(pump) => {
            if !pump.is_live() {
                return None;
            }
            Frame::Payload {
                id: pump.id(),
                follows: false,
                complete: true,
                next: false,
                payload: Payload::default(),
            }
        }
        Out::Credit(inbound) => match inbound.flush_control() {
            Control::Nothing => return None,
            Control::RequestN(id, n) => Frame::RequestN { id, n },
            Control::Cancel(id) => Frame::Cancel { id },
        },
        Out::Open(opening) => return open(conn, opening),
    };
    Some((frame, None))
}

pub(crate) type ChannelStart = (ChannelInput, PumpRef);

/// Opens one of this side's requests: allocates its id and puts it in the table. Returns
/// the request frame, and for a channel the input publisher to subscribe once it is sent.
fn open(conn: &Arc<Conn>, opening: Opening) -> Option<(Frame, Option<ChannelStart>)> {
    match opening {
        Opening::Stream(inbound) => {
            let request = inbound.take_request()?;
            if let Err(e) = conn.take_lease() {
                inbound.fail(e.into());
                return None;
            }
            let channel = matches!(request, Request::Channel { .. });
            let mut pump = None;
            let opened = conn.table.open_local(|id| {
                let mut slot = Slot {
                    inbound: Some(inbound.clone()),
                    ..Slot::default()
                };
                if channel {
                    let p = Pump::new(conn.clone(), id, 0);
                    pump = Some(p.clone());
                    slot.outbound = Some(p as OutRef);
                }
                slot
            });
            let id = match opened {
                Ok(id) => id,
                Err(e) => {
                    inbound.fail(e.into());
                    return None;
                }
            };
            if !inbound.opened(id) {
                conn.table.remove(id);
                return None;
            }
            let n = inbound.take_credit();
            match request {
                Request::Stream { route, payload } => Some((
                    Frame::RequestStream {
                        id,
                        follows: false,
                        n,
                        payload: with_route(route, payload),
                    },
                    None,
                )),
                Request::Channel {
                    route,
                    payload,
                    input,
                } => Some((
                    Frame::RequestChannel {
                        id,
                        follows: false,
                        complete: false,
                        n,
                        payload: with_route(route, payload),
                    },
                    pump.map(|p| (input, p)),
                )),
            }
        }
        Opening::Response(slot) => {
            // One lock of the request's for what took two; the lease and the table are
            // taken inside it (the request's lock is never taken under theirs).
            let (id, route, payload) = slot.open_with(&mut || {
                conn.take_lease()?;
                let response = Some(slot.clone());
                conn.table.open_local(move |_| Slot {
                    response,
                    ..Slot::default()
                })
            })?;
            Some((
                Frame::RequestResponse {
                    id,
                    follows: false,
                    payload: with_route(route, payload),
                },
                None,
            ))
        }
        Opening::FireAndForget(payload) => {
            let id = conn.table.allocate_id().ok()?;
            Some((
                Frame::RequestFnf {
                    id,
                    follows: false,
                    payload,
                },
                None,
            ))
        }
    }
}

/// The request's payload with the route's composite metadata in front of its own.
pub(crate) fn with_route(
    route: Option<crate::rsocket::metadata::Route>,
    payload: Payload,
) -> Payload {
    match route {
        None => payload,
        Some(r) => Payload {
            metadata: Some(r.with(payload.metadata)),
            data: payload.data,
        },
    }
}
