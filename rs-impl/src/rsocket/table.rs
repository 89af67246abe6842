//! The connection's stream table: which stream id belongs to which local stream object, the
//! allocation of this side's stream ids, and the end of every stream when the connection
//! closes.
//!
//! **Contract.**
//!
//! * A stream id maps to a [`Slot`] of up to three parts: the inbound half (PAYLOADs to a
//!   local subscriber), the outbound half (a local publisher's elements to the peer), and a
//!   request_response (either side). A slot leaves the table when its last part ends
//!   ([`StreamTable::finish`]), so a late frame for it finds nothing and is ignored.
//! * This side's ids are allocated in the order the writer sends the requests (odd on a
//!   client, even on a server, from 1 or 2 by 2); the peer's ids must have the peer's parity
//!   and grow. A frame for an id that neither side has opened yet is a protocol error
//!   ([`StreamTable::never_opened`]); a frame for one that has ended is ignored.
//! * [`StreamTable::close`] happens once: it takes every slot out (the caller ends each
//!   part), and every later open fails with the close's error. An open racing the close
//!   either lands before it (and is ended with the others) or fails; no stream is left
//!   without its terminal signal (loom model `rsocket::open_while_closing`).
//! * Streams are counted per direction against `max_streams`.
//! * **Inbound lanes** (a server with `lanes > 1`): the reader accepts each of the peer's
//!   requests in wire order ([`StreamTable::accept_remote`]: parity, growth, and the hash of
//!   the request's route, its *lane key*), before a lane opens it; frames that follow on the
//!   stream find their lane through [`StreamTable::lane`]. The key stays while the request
//!   waits in its lane and while its stream is in the table: it leaves with the slot, or
//!   when the lane has handled a request that left no slot ([`StreamTable::settle`]). With
//!   one lane the keys are never used.

use std::collections::HashMap;

use super::error::RSocketError;
use super::frame::MAX_U31;
use super::part::{InRef, OutRef, RespRef};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::Mutex;

/// Which side a connection is: it decides the parity of this side's stream ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Odd stream ids.
    Client,
    /// Even stream ids.
    Server,
}

/// The parts of one stream.
#[derive(Default, Clone)]
pub(crate) struct Slot {
    /// PAYLOADs from the peer to a local subscriber.
    pub(crate) inbound: Option<InRef>,
    /// A local publisher's elements to the peer.
    pub(crate) outbound: Option<OutRef>,
    /// A request_response: this side's request waiting for its answer, or the peer's
    /// request whose answer is being computed.
    pub(crate) response: Option<RespRef>,
}

impl Slot {
    fn is_empty(&self) -> bool {
        self.inbound.is_none() && self.outbound.is_none() && self.response.is_none()
    }
}

/// Which part of a slot ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Inbound,
    Outbound,
    Response,
}

/// Stream ids are small and sequential: a multiplicative hash spreads them at the cost of
/// one multiplication (the default SipHash costs more per frame than the rest of a lookup).
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type IdMap<V> = HashMap<u32, V, std::hash::BuildHasherDefault<IdHasher>>;

struct Inner {
    streams: IdMap<Slot>,
    /// Set by `close`; every later open fails with it.
    closed: Option<RSocketError>,
    /// This side's next stream id (0 once the ids are used up).
    next_id: u32,
    /// The highest stream id the peer has opened.
    last_peer_id: u32,
    /// Streams this side opened that are in the table.
    local: usize,
    /// Streams the peer opened that are in the table.
    remote: usize,
    /// The lane key (the hash of the route) of each of the peer's requests accepted by the
    /// reader for a lane and not yet settled, or whose stream is in the table (inbound
    /// lanes only: empty with one lane).
    keys: IdMap<u32>,
}

/// Where a PAYLOAD goes ([`StreamTable::payload_target`]).
pub(crate) enum PayloadTarget {
    /// The stream's inbound half.
    Inbound(InRef),
    /// This side's request_response, out of the table now.
    Response(RespRef),
    /// Neither: the frame is ignored or refused.
    None,
}

/// Why the peer's request was not accepted.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The id has the wrong parity or does not grow: ignore the frame (the spec's "a request
    /// on a stream id already in use MUST be ignored").
    Ignore,
    /// Too many streams: answer `ERROR[REJECTED]`.
    TooMany,
    /// The connection is closed: drop the request.
    Closed,
}

/// The stream table.
pub(crate) struct StreamTable {
    role: Role,
    max_streams: usize,
    inner: Mutex<Inner>,
}

impl StreamTable {
    pub(crate) fn new(role: Role, max_streams: usize) -> Self {
        StreamTable {
            role,
            max_streams,
            inner: Mutex::new(Inner {
                streams: IdMap::default(),
                closed: None,
                next_id: if role == Role::Client { 1 } else { 2 },
                last_peer_id: 0,
                local: 0,
                remote: 0,
                keys: IdMap::default(),
            }),
        }
    }

    fn is_local(&self, id: u32) -> bool {
        (id % 2 == 1) == (self.role == Role::Client)
    }

    /// Allocates this side's next id and puts `make(id)` in the table.
    pub(crate) fn open_local(&self, make: impl FnOnce(u32) -> Slot) -> Result<u32, RSocketError> {
        let mut t = self.inner.lock();
        // The broken twin of the open-while-closing model skips this look: the stream then
        // lands in a table nobody will close again.
        if !fault::active(Fault::OpenIgnoresClose) {
            if let Some(e) = &t.closed {
                return Err(e.clone());
            }
        }
        if t.local >= self.max_streams {
            return Err(RSocketError::TooManyStreams(self.max_streams));
        }
        let id = Self::allocate(&mut t)?;
        t.streams.insert(id, make(id));
        t.local += 1;
        Ok(id)
    }

    /// Allocates this side's next id for a request that opens no stream (fire-and-forget).
    pub(crate) fn allocate_id(&self) -> Result<u32, RSocketError> {
        let mut t = self.inner.lock();
        if let Some(e) = &t.closed {
            return Err(e.clone());
        }
        Self::allocate(&mut t)
    }

    fn allocate(t: &mut Inner) -> Result<u32, RSocketError> {
        let id = t.next_id;
        if id == 0 {
            return Err(RSocketError::Closed(
                "this side's stream ids are used up (2^31 - 1): open a new connection".into(),
            ));
        }
        t.next_id = if id > MAX_U31 - 2 { 0 } else { id + 2 };
        Ok(id)
    }

    /// Accepts the peer's request on `id`: checks parity, growth and the stream limit, and
    /// puts `slot` in the table (an empty slot records only the id: fire-and-forget, or a
    /// request answered at once).
    ///
    /// A request the reader accepted for a lane ([`accept_remote`](Self::accept_remote)) was
    /// checked there, in wire order: it is not checked again (lanes open requests out of
    /// wire order across lanes).
    pub(crate) fn open_remote(&self, id: u32, slot: Slot) -> Result<(), Refused> {
        let mut t = self.inner.lock();
        if t.closed.is_some() {
            return Err(Refused::Closed);
        }
        if t.keys.is_empty() || !t.keys.contains_key(&id) {
            if id == 0 || self.is_local(id) || id <= t.last_peer_id {
                return Err(Refused::Ignore);
            }
            t.last_peer_id = id;
        }
        if slot.is_empty() {
            return Ok(());
        }
        if t.remote >= self.max_streams {
            return Err(Refused::TooMany);
        }
        t.streams.insert(id, slot);
        t.remote += 1;
        Ok(())
    }

    /// The reader's check of the peer's request `id` for a lane, in wire order (parity and
    /// growth, as [`open_remote`](Self::open_remote)), recording `key`, the hash of its
    /// route, until the lane settles it.
    pub(crate) fn accept_remote(&self, id: u32, key: u32) -> Result<(), Refused> {
        let mut t = self.inner.lock();
        if t.closed.is_some() {
            return Err(Refused::Closed);
        }
        if id == 0 || self.is_local(id) || id <= t.last_peer_id {
            return Err(Refused::Ignore);
        }
        t.last_peer_id = id;
        t.keys.insert(id, key);
        Ok(())
    }

    /// The lane key of the peer's stream `id`: `Some` while its request waits in a lane or
    /// its stream is in the table.
    pub(crate) fn lane(&self, id: u32) -> Option<u32> {
        let t = self.inner.lock();
        if t.keys.is_empty() {
            return None;
        }
        t.keys.get(&id).copied()
    }

    /// A lane handled the request of `id`: its key leaves unless its stream is in the table
    /// (then it leaves with the slot).
    pub(crate) fn settle(&self, id: u32) {
        let mut t = self.inner.lock();
        if !t.streams.contains_key(&id) {
            t.keys.remove(&id);
        }
    }

    /// Puts the peer's stream `id`, already accepted by [`open_remote`](Self::open_remote)
    /// with an empty slot, in the table: `false` beyond the stream limit, or once closed.
    pub(crate) fn insert_remote(&self, id: u32, slot: Slot) -> bool {
        let mut t = self.inner.lock();
        if t.closed.is_some() || t.remote >= self.max_streams {
            return false;
        }
        t.streams.insert(id, slot);
        t.remote += 1;
        true
    }

    /// The outbound half of stream `id`, if it is in the table.
    pub(crate) fn outbound(&self, id: u32) -> Option<OutRef> {
        self.inner.lock().streams.get(&id)?.outbound.clone()
    }

    /// Where a PAYLOAD on `id` goes, in one look: the stream's inbound half if it has one;
    /// otherwise, with `response` (the id is this side's), this side's request_response on
    /// `id`, taken out of the table as [`take_response`](Self::take_response) does.
    pub(crate) fn payload_target(&self, id: u32, response: bool) -> PayloadTarget {
        let mut t = self.inner.lock();
        let Some(slot) = t.streams.get_mut(&id) else {
            return PayloadTarget::None;
        };
        if let Some(inbound) = &slot.inbound {
            return PayloadTarget::Inbound(inbound.clone());
        }
        if !response {
            return PayloadTarget::None;
        }
        let Some(r) = slot.response.take() else {
            return PayloadTarget::None;
        };
        if slot.is_empty() {
            t.streams.remove(&id);
            t.local -= 1;
        }
        PayloadTarget::Response(r)
    }

    /// Takes this side's request_response on `id` out of the table (its answer arrived).
    pub(crate) fn take_response(&self, id: u32) -> Option<RespRef> {
        let mut t = self.inner.lock();
        let slot = t.streams.get_mut(&id)?;
        let response = slot.response.take()?;
        if slot.is_empty() {
            t.streams.remove(&id);
            t.local -= 1;
        }
        Some(response)
    }

    /// The stream `id`'s parts, if it is in the table.
    pub(crate) fn get(&self, id: u32) -> Option<Slot> {
        self.inner.lock().streams.get(&id).cloned()
    }

    /// Whether `id` is one that neither side has opened yet: a frame for it breaks the
    /// protocol (unlike a frame for an ended stream, which is ignored).
    pub(crate) fn never_opened(&self, id: u32) -> bool {
        let t = self.inner.lock();
        if self.is_local(id) {
            t.next_id != 0 && id >= t.next_id
        } else {
            id > t.last_peer_id
        }
    }

    /// Ends `part` of stream `id`; the slot leaves the table when no part is left. Returns
    /// the slot's remaining parts (empty when it left, or was not there).
    pub(crate) fn finish(&self, id: u32, part: Part) -> Slot {
        let mut t = self.inner.lock();
        let Some(slot) = t.streams.get_mut(&id) else {
            return Slot::default();
        };
        match part {
            Part::Inbound => slot.inbound = None,
            Part::Outbound => slot.outbound = None,
            Part::Response => slot.response = None,
        }
        if slot.is_empty() {
            t.streams.remove(&id);
            if self.is_local(id) {
                t.local -= 1;
            } else {
                t.remote -= 1;
                Self::forget_key(&mut t, id);
            }
            Slot::default()
        } else {
            slot.clone()
        }
    }

    /// Takes the whole stream `id` out of the table (an ERROR or a CANCEL that ends every
    /// part), returning its parts.
    pub(crate) fn remove(&self, id: u32) -> Option<Slot> {
        let mut t = self.inner.lock();
        let slot = t.streams.remove(&id)?;
        if self.is_local(id) {
            t.local -= 1;
        } else {
            t.remote -= 1;
            Self::forget_key(&mut t, id);
        }
        Some(slot)
    }

    /// The peer's stream `id` left the table: its lane key goes with it.
    #[inline]
    fn forget_key(t: &mut Inner, id: u32) {
        if !t.keys.is_empty() {
            t.keys.remove(&id);
        }
    }

    /// Closes the table: later opens fail with `error`; returns every slot, for the caller
    /// to end (outside the lock). A second close returns nothing.
    pub(crate) fn close(&self, error: RSocketError) -> Vec<Slot> {
        let mut t = self.inner.lock();
        if t.closed.is_some() {
            return Vec::new();
        }
        t.closed = Some(error);
        t.local = 0;
        t.remote = 0;
        t.keys.clear();
        t.streams.drain().map(|(_, s)| s).collect()
    }

    /// The close's error, once closed.
    pub(crate) fn closed(&self) -> Option<RSocketError> {
        self.inner.lock().closed.clone()
    }

    /// Streams in the table (both directions).
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().streams.len()
    }
}
