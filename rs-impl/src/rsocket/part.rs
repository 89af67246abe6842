//! The parts of a stream as the connection sees them: what the stream table holds, what the
//! outbox carries, and what the reader, the writer and the close call. The streams
//! themselves ([`inbound`](super::inbound), [`pump`](super::pump),
//! [`response`](super::response)) implement these traits and build on the connection; the
//! connection knows them only through the traits, so that no import runs in a circle.

use std::task::{Context, Poll};

use rs_api::{Error, Publisher};

use super::error::RSocketError;
use super::metadata::Route;
use super::payload::Payload;

/// A handle on an inbound stream.
pub(crate) type InRef = std::sync::Arc<dyn InPart>;
/// A handle on an outbound stream.
pub(crate) type OutRef = std::sync::Arc<dyn OutPart>;
/// A handle on a request_response.
pub(crate) type RespRef = std::sync::Arc<dyn RespPart>;

/// A local publisher that feeds a channel's requester side.
pub(crate) type ChannelInput = std::sync::Arc<dyn Publisher<Payload> + Send + Sync>;

/// What this side's request sends when it opens.
pub(crate) enum Request {
    /// REQUEST_STREAM.
    Stream {
        route: Option<Route>,
        payload: Payload,
    },
    /// REQUEST_CHANNEL, with the publisher of this side's half.
    Channel {
        route: Option<Route>,
        payload: Payload,
        input: ChannelInput,
    },
}

/// What the writer sends for an inbound stream's credit-or-cancel item.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Control {
    Nothing,
    RequestN(u32, u32),
    Cancel(u32),
}

/// An inbound stream: PAYLOADs from the peer to a local subscriber.
pub(crate) trait InPart: Send + Sync {
    /// Writer: the request to send, `None` if cancelled meanwhile.
    fn take_request(&self) -> Option<Request>;
    /// Writer: the stream is in the table as `id`; `false` when a cancel came first.
    fn opened(&self, id: u32) -> bool;
    /// Writer: the credit for the initial request n or the next REQUEST_N.
    fn take_credit(&self) -> u32;
    /// Writer: the credit-or-cancel item's frame.
    fn flush_control(&self) -> Control;
    /// Reader: a PAYLOAD(N); `Pending` while the stream's buffer is full.
    fn poll_next(&self, cx: &mut Context<'_>, payload: &mut Option<Payload>) -> Poll<bool>;
    /// Reader: the peer completed the stream.
    fn complete(&self);
    /// The peer's ERROR, or the connection's end.
    fn fail(&self, error: Error);
}

/// An outbound stream: a local publisher's elements to the peer.
pub(crate) trait OutPart: Send + Sync {
    /// The stream id.
    fn id(&self) -> u32;
    /// The peer's REQUEST_N.
    fn grant(&self, n: u32);
    /// Writer: `k` elements were taken off the queue.
    fn wrote(&self, k: u64);
    /// Whether the stream's elements should still be written.
    fn is_live(&self) -> bool;
    /// The peer's CANCEL or ERROR, or the connection's end.
    fn cancel(&self);
}

/// A request_response, on either side.
pub(crate) trait RespPart: Send + Sync {
    /// Writer: opens the request under the request's own lock, so that a drop of its
    /// future either comes first (nothing is opened: `None`) or finds it sent on its id
    /// (and cancels it). `open` takes the lease, allocates the id and puts the stream in the
    /// table; if it fails, the request resolves with its error (`None`). Returns the id and
    /// the request to send.
    fn open_with(
        &self,
        open: &mut dyn FnMut() -> Result<u32, RSocketError>,
    ) -> Option<(u32, Option<Route>, Payload)>;
    /// Reader: the answer arrived.
    fn resolve(&self, result: Result<Payload, RSocketError>);
    /// The peer's ERROR or CANCEL, or the connection's end.
    fn fail(&self, error: RSocketError);
}

/// Whether two handles are the same stream.
pub(crate) fn same(a: &OutRef, b: &OutRef) -> bool {
    std::ptr::eq(
        std::sync::Arc::as_ptr(a).cast::<()>(),
        std::sync::Arc::as_ptr(b).cast::<()>(),
    )
}
