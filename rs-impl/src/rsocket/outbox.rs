//! The connection's outbound queue: what waits for the writer task, and the writer's and the
//! reader's wake-ups.
//!
//! **Bound.** The queue has no capacity of its own: every producer is bounded where it
//! stands, and the sum is the bound (the module documentation lists it):
//!
//! * an outbound stream queues only elements its publisher was asked for, and it
//!   asks for at most `stream_window` elements beyond what the writer has written;
//! * an inbound stream queues at most one credit-or-cancel item at a time (REQUEST_N credit
//!   accumulates in the stream while its item waits) and one opening request;
//! * a request_response on either side queues one request or one answer;
//! * the reader, before handling a frame that makes the connection answer (a request, a
//!   KEEPALIVE asking for an answer, a LEASE), waits until fewer than `control_queue` items
//!   wait ([`Outbox::poll_below`]): it stops reading the socket meanwhile, so a peer that
//!   sends without reading is held back by TCP.
//!
//! The writer takes everything queued in one swap (no allocation once both queues have
//! grown to their working size), so a burst costs one lock for the writer. It takes under
//! the writer's own lock ([`Writer`](super::conn::writer::Writer)), which the writer task
//! and the reader's inline flush share, so items go to the socket in the order queued.
//!

use std::collections::VecDeque;
use std::task::{Context, Poll, Waker};

use super::frame::Frame;
use super::part::{InRef, OutRef, RespRef};
use super::payload::Payload;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Mutex;

/// A request of this side that the writer opens: it allocates the stream id and puts the
/// stream in the table in wire order.
pub(crate) enum Opening {
    /// REQUEST_STREAM or REQUEST_CHANNEL (with its outbound half).
    Stream(InRef),
    /// REQUEST_RESPONSE.
    Response(RespRef),
    /// REQUEST_FNF: the request alone.
    FireAndForget(Payload),
}

/// One item for the writer.
pub(crate) enum Out {
    /// A frame of the connection or of a stream that is already encoded as a value.
    Frame(Frame),
    /// An element of an outbound stream: PAYLOAD(N), counted in its window when written.
    Next(OutRef, Payload),
    /// The end of an outbound stream: PAYLOAD(C).
    Complete(OutRef),
    /// An inbound stream's pending credit (REQUEST_N) or cancel (CANCEL).
    Credit(InRef),
    /// A request to open.
    Open(Opening),
}

struct State {
    items: VecDeque<Out>,
    /// The writer, parked for items or for the end of a socket write.
    writer: Option<Waker>,
    /// The reader, waiting for the queue to shrink below its limit.
    reader: Option<Waker>,
    /// The writer, waiting on a socket write, to be told of the close.
    closing: Option<Waker>,
    /// Set by `close`: the frame to write last, if any (taken by the writer).
    closed: bool,
    last: Option<Frame>,
    /// The most items that waited at once.
    high: usize,
    /// Set while the reader handles frames already read: pushes do not wake the writer
    /// until [`Outbox::uncork`], so that the answers to one read go out in one write.
    corked: bool,
    /// The writer task must run although nothing is queued: an inline flush left bytes.
    kicked: bool,
}

/// The outbound queue of one connection.
pub(crate) struct Outbox {
    state: Mutex<State>,
    /// The number of items waiting, stored under the lock at each change: the reader's
    /// check before each request ([`Outbox::poll_below`]) reads it without the lock while
    /// the queue is below its limit (a count that is stale the moment it is read either
    /// way).
    len: AtomicUsize,
}

impl Outbox {
    pub(crate) fn new() -> Self {
        Outbox {
            state: Mutex::new(State {
                items: VecDeque::with_capacity(64),
                writer: None,
                reader: None,
                closing: None,
                closed: false,
                last: None,
                high: 0,
                corked: false,
                kicked: false,
            }),
            len: AtomicUsize::new(0),
        }
    }

    /// Queues `item` and wakes the writer if it is parked. After `close`, the item is
    /// dropped (returned as `false`).
    pub(crate) fn push(&self, item: Out) -> bool {
        let mut s = self.state.lock();
        if s.closed {
            return false;
        }
        s.items.push_back(item);
        let len = s.items.len();
        self.len.store(len, Ordering::Relaxed);
        s.high = s.high.max(len);
        if s.corked {
            return true;
        }
        let w = s.writer.take();
        drop(s);
        if let Some(w) = w {
            w.wake();
        }
        true
    }

    /// Pushes stop waking the writer (the reader is about to handle a frame).
    pub(crate) fn cork(&self) {
        self.state.lock().corked = true;
    }

    /// Pushes wake the writer again; wakes it now if items wait.
    pub(crate) fn uncork(&self) {
        let mut s = self.state.lock();
        if !s.corked {
            return;
        }
        s.corked = false;
        let w = if s.items.is_empty() {
            None
        } else {
            s.writer.take()
        };
        drop(s);
        if let Some(w) = w {
            w.wake();
        }
    }

    /// The number of items waiting (for tests and the bounds' checks).
    pub(crate) fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// The most items that waited at once.
    pub(crate) fn high_water(&self) -> usize {
        self.state.lock().high
    }

    /// Ready when fewer than `limit` items wait (or the outbox is closed); otherwise parks
    /// the reader until the writer takes them.
    pub(crate) fn poll_below(&self, cx: &mut Context<'_>, limit: usize) -> Poll<()> {
        if self.len.load(Ordering::Relaxed) < limit {
            return Poll::Ready(());
        }
        let mut s = self.state.lock();
        if s.items.len() < limit || s.closed {
            Poll::Ready(())
        } else {
            s.reader = Some(cx.waker().clone());
            // The writer must run for the queue to shrink.
            s.corked = false;
            let w = s.writer.take();
            drop(s);
            if let Some(w) = w {
                w.wake();
            }
            Poll::Pending
        }
    }

    /// The writer task's wait: `Ready(None)` once items wait (or an inline flush left
    /// bytes: [`Outbox::kick`]), `Ready(Some(last))` once closed (with the last frame, if
    /// any, the first time); otherwise parks the writer.
    pub(crate) fn poll_wait(&self, cx: &mut Context<'_>) -> Poll<Option<Option<Frame>>> {
        let mut s = self.state.lock();
        if s.closed {
            let last = s.last.take();
            s.items.clear();
            self.len.store(0, Ordering::Relaxed);
            return Poll::Ready(Some(last));
        }
        if s.items.is_empty() && !s.kicked {
            s.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        s.kicked = false;
        Poll::Ready(None)
    }

    /// Takes everything queued into `batch` (swapped when `batch` is empty, appended
    /// otherwise) and wakes a reader waiting for room. `false` once closed.
    pub(crate) fn take_now(&self, batch: &mut VecDeque<Out>) -> bool {
        let mut s = self.state.lock();
        if s.closed {
            return false;
        }
        if batch.is_empty() {
            std::mem::swap(&mut s.items, batch);
        } else {
            batch.extend(s.items.drain(..));
        }
        self.len.store(0, Ordering::Relaxed);
        let r = s.reader.take();
        drop(s);
        if let Some(r) = r {
            r.wake();
        }
        true
    }

    /// Wakes the writer task although nothing may be queued (an inline flush left bytes
    /// the socket did not take).
    pub(crate) fn kick(&self) {
        let mut s = self.state.lock();
        s.kicked = true;
        let w = s.writer.take();
        drop(s);
        if let Some(w) = w {
            w.wake();
        }
    }

    /// The loom model's take: [`poll_wait`](Self::poll_wait), then
    /// [`take_now`](Self::take_now).
    #[cfg(rs_loom)]
    pub(crate) fn poll_take(
        &self,
        cx: &mut Context<'_>,
        batch: &mut VecDeque<Out>,
    ) -> Poll<Option<Option<Frame>>> {
        match self.poll_wait(cx) {
            Poll::Ready(None) => {
                self.take_now(batch);
                Poll::Ready(None)
            }
            other => other,
        }
    }

    /// For the writer while a socket write is pending: ready once closed.
    pub(crate) fn poll_closed(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = self.state.lock();
        if s.closed {
            Poll::Ready(())
        } else {
            s.closing = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    /// Closes the queue: drops what waits, keeps `last` for the writer to send, wakes both
    /// the writer and the reader. Returns the dropped items (dropped by the caller, outside
    /// the lock: they hold streams).
    pub(crate) fn close(&self, last: Option<Frame>) -> VecDeque<Out> {
        let mut s = self.state.lock();
        if s.closed {
            return VecDeque::new();
        }
        s.closed = true;
        s.last = last;
        let items = std::mem::take(&mut s.items);
        self.len.store(0, Ordering::Relaxed);
        let w = s.writer.take();
        let r = s.reader.take();
        let c = s.closing.take();
        drop(s);
        for waker in [w, r, c].into_iter().flatten() {
            waker.wake();
        }
        items
    }
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").field("len", &self.len()).finish()
    }
}
