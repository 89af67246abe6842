//! One connection's shared state ([`Conn`]): the stream table, the outbound queue, the
//! requester's view of the peer's LEASE, and the close that ends every stream; and the
//! connection's tokio tasks: the reader ([`reader`]), the writer ([`writer`]) and the
//! keepalive timer ([`keepalive`]).
//!
//! The shared state is plain synchronous code on the loom facade (the loom models drive it
//! without tokio); only the tasks are tokio's.

pub(crate) mod keepalive;
pub(crate) mod reader;
pub(crate) mod writer;

use std::time::Instant;

use super::config::ConnectionConfig;
use super::error::{ErrorCode, RSocketError};
use super::frame::Frame;
use super::outbox::{Opening, Out, Outbox};
use super::table::{Role, Slot, StreamTable};
use crate::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::Mutex;

/// The requester's view of the peer's LEASE (spec, "Lease Semantics"). Whether requests
/// need a LEASE at all is [`Conn`]'s flag (set by [`Conn::enforce_lease`]), the one source
/// of truth: it is read without this lock on every request.
#[derive(Debug, Default)]
pub(crate) struct LeaseState {
    /// Until when the last LEASE is valid.
    pub(crate) expires: Option<Instant>,
    /// Requests the last LEASE still allows.
    pub(crate) remaining: u32,
    /// Tasks waiting for the first LEASE (a client's `connect` with `lease` set).
    pub(crate) waiters: Vec<std::task::Waker>,
}

impl LeaseState {
    /// Takes one request from the lease, or says why not: called only under a lease regime
    /// ([`Conn::take_lease`] checks it first), so the clock is not read for every request.
    pub(crate) fn take(&mut self, now: impl FnOnce() -> Instant) -> Result<(), RSocketError> {
        let now = now();
        match self.expires {
            None => Err(RSocketError::NoLease("no LEASE received yet".into())),
            Some(t) if now >= t => Err(RSocketError::NoLease("the LEASE expired".into())),
            Some(_) if self.remaining == 0 => Err(RSocketError::NoLease(
                "the LEASE's requests are used up".into(),
            )),
            Some(_) => {
                self.remaining -= 1;
                Ok(())
            }
        }
    }
}

/// The LEASE this side granted the peer, as its responder enforces it.
#[derive(Debug)]
pub(crate) struct Granted {
    /// Until when the last LEASE sent is valid.
    pub(crate) expires: Instant,
    /// Requests it still allows.
    pub(crate) remaining: u32,
}

/// What one connection shares between its tasks and its streams.
pub(crate) struct Conn {
    pub(crate) role: Role,
    pub(crate) config: ConnectionConfig,
    pub(crate) table: StreamTable,
    pub(crate) outbox: Outbox,
    /// The peer's LEASE, for this side's requests.
    pub(crate) lease: Mutex<LeaseState>,
    /// The LEASE this side granted, for the peer's requests (`None`: no lease regime).
    pub(crate) granted: Mutex<Option<Granted>>,
    /// Set (once, never cleared) when this side first grants a LEASE: until then
    /// [`Conn::admit`] takes no lock.
    leasing: AtomicBool,
    /// Requests need the peer's LEASE: this side asked for leases in its SETUP, or the peer
    /// sent one. Set once ([`Conn::enforce_lease`], under the `lease` lock), never cleared;
    /// until then this side's requests ([`Conn::take_lease`]) take no lock.
    leased: AtomicBool,
    closed: AtomicBool,
    /// Frames received so far (published by the reader after each read's frames): the
    /// keepalive timer sees the peer's silence as a count that stops growing.
    frames_in: AtomicU64,
    /// Inbound lanes built for this connection (0: frames are handled on the reader task).
    lanes: AtomicUsize,
    /// The depth of each inbound lane, once lanes are built.
    lane_depths: Mutex<Option<crate::lanes::LaneDepths>>,
    /// The reader task, aborted by `close` (it may be parked on a socket that never wakes).
    reader_task: Mutex<Option<tokio::task::AbortHandle>>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("role", &self.role)
            .field("streams", &self.table.len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Conn {
    pub(crate) fn new(role: Role, config: ConnectionConfig) -> Self {
        Conn {
            role,
            table: StreamTable::new(role, config.max_streams),
            outbox: Outbox::new(),
            config,
            lease: Mutex::new(LeaseState::default()),
            granted: Mutex::new(None),
            leasing: AtomicBool::new(false),
            leased: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            frames_in: AtomicU64::new(0),
            lanes: AtomicUsize::new(0),
            lane_depths: Mutex::new(None),
            reader_task: Mutex::new(None),
        }
    }

    /// This side's requests need the peer's LEASE from now on. Called with the `lease` lock
    /// held (`_lease`), so that a request that sees the flag and then takes the lock sees
    /// what the caller records under it (the LEASE's terms).
    pub(crate) fn enforce_lease(&self, _lease: &mut LeaseState) {
        self.leased.store(true, Ordering::Release);
    }

    /// Takes one request from the peer's LEASE ([`LeaseState::take`]), without a lock
    /// while no lease regime is in force. A LEASE regime that starts as a request is opened
    /// is as if it had started just after it, as with the lock.
    #[inline]
    pub(crate) fn take_lease(&self) -> Result<(), RSocketError> {
        if !self.leased.load(Ordering::Acquire) {
            return Ok(());
        }
        self.take_lease_locked()
    }

    #[cold]
    fn take_lease_locked(&self) -> Result<(), RSocketError> {
        self.lease.lock().take(std::time::Instant::now)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The reason the connection closed, once it has.
    pub(crate) fn close_reason(&self) -> Option<RSocketError> {
        self.table.closed()
    }

    /// Publishes the number of frames received so far.
    pub(crate) fn received(&self, frames: u64) {
        self.frames_in.store(frames, Ordering::Relaxed);
    }

    /// Frames received so far.
    pub(crate) fn frames_in(&self) -> u64 {
        self.frames_in.load(Ordering::Relaxed)
    }

    /// Records the inbound lanes built for this connection, and their depths.
    pub(crate) fn set_lanes(&self, n: usize, depths: crate::lanes::LaneDepths) {
        *self.lane_depths.lock() = Some(depths);
        self.lanes.store(n, Ordering::Relaxed);
    }

    /// Frames waiting in the fullest inbound lane now (0 without lanes).
    pub(crate) fn lane_depth(&self) -> usize {
        let depths = self.lane_depths.lock().clone();
        depths.map_or(0, |d| d.depths().into_iter().max().unwrap_or(0))
    }

    /// Inbound lanes built for this connection (0 with one lane: none is built).
    pub(crate) fn lanes(&self) -> usize {
        self.lanes.load(Ordering::Relaxed)
    }

    pub(crate) fn set_reader_task(&self, task: tokio::task::AbortHandle) {
        *self.reader_task.lock() = Some(task);
    }

    /// Closes the connection once: every stream ends with `reason` (subscribers get
    /// `on_error`, local publishers are cancelled), the writer sends `last` (if any) and
    /// shuts the socket, the reader stops.
    pub(crate) fn close(&self, reason: RSocketError, last: Option<Frame>) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let slots = self.table.close(reason.clone());
        // Requests still queued are not in the table yet: they end here (found by the loom
        // model `open_while_closing`).
        for item in self.outbox.close(last) {
            match item {
                Out::Open(Opening::Stream(inbound)) => inbound.fail(reason.clone().into()),
                Out::Open(Opening::Response(response)) => response.fail(reason.clone()),
                _ => {}
            }
        }
        for slot in slots {
            end_slot(slot, &reason);
        }
        if let Some(task) = self.reader_task.lock().take() {
            task.abort();
        }
    }

    /// Closes the connection for a protocol error: `ERROR[code]` on stream 0, then the end.
    pub(crate) fn fail(&self, code: ErrorCode, message: String) {
        let frame = Frame::Error {
            id: 0,
            code,
            data: message.clone().into(),
        };
        self.close(RSocketError::remote(code, message), Some(frame));
    }

    /// Sends a LEASE of `grant` and enforces it from now on.
    pub(crate) fn grant_lease(&self, grant: &super::config::LeaseGrant) {
        *self.granted.lock() = Some(Granted {
            expires: Instant::now() + grant.ttl,
            remaining: grant.requests,
        });
        self.leasing.store(true, Ordering::Release);
        self.send(lease_frame(grant));
    }

    /// The responder's lease check for one of the peer's requests: `false` when no LEASE of
    /// this side allows it (the request is then answered `ERROR[REJECTED]`).
    pub(crate) fn admit(&self) -> bool {
        if !self.leasing.load(Ordering::Acquire) {
            return true;
        }
        let mut g = self.granted.lock();
        match g.as_mut() {
            None => true,
            Some(l) if l.remaining > 0 && Instant::now() < l.expires => {
                l.remaining -= 1;
                true
            }
            Some(_) => false,
        }
    }

    /// Waits until the writer has room for what the connection answers (the outbox below
    /// `control_queue`): meanwhile the reader does not read the socket.
    pub(crate) async fn room(&self) {
        let limit = self.config.control_queue;
        futures::future::poll_fn(|cx| self.outbox.poll_below(cx, limit)).await
    }

    /// Queues a frame of a stream (bounded by the stream: one per stream and event).
    pub(crate) fn send(&self, frame: Frame) {
        self.outbox.push(Out::Frame(frame));
    }
}

/// The LEASE frame of a grant.
pub(crate) fn lease_frame(grant: &super::config::LeaseGrant) -> Frame {
    Frame::Lease {
        ttl_ms: grant.ttl.as_millis().min(u32::MAX as u128) as u32,
        requests: grant.requests,
        metadata: None,
    }
}

/// Ends every part of a slot with `error` (the connection closed, or the peer's ERROR).
pub(crate) fn end_slot(slot: Slot, error: &RSocketError) {
    if let Some(inbound) = slot.inbound {
        inbound.fail(error.clone().into());
    }
    if let Some(pump) = slot.outbound {
        pump.cancel();
    }
    if let Some(response) = slot.response {
        response.fail(error.clone());
    }
}
