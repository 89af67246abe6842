//! RSocket 1.0 frames: their types, flags and fields ([`Frame`]), parsing ([`decode`]) and
//! writing ([`encode`]). The TCP length prefix is the codec's ([`super::codec`]).
//!
//! Every frame starts with a 6-byte header: a 31-bit stream id, a 6-bit type and 10 bits of
//! flags, of which the top two are I (ignore if not understood) and M (metadata present).
//! Frames that carry a payload put a 24-bit metadata length before the metadata when M is
//! set (except METADATA_PUSH and LEASE, whose metadata is the rest of the frame).
//!
//! Parsing never copies: a decoded frame's payload is a view of the frame's [`Bytes`].

pub(crate) mod decode;
pub(crate) mod encode;

use bytes::Bytes;

use super::error::ErrorCode;
use super::payload::Payload;

/// The largest frame the spec allows (the 24-bit length prefix), header included.
pub(crate) const MAX_FRAME_LEN: usize = 0xFF_FFFF;
/// The frame header: stream id (4 bytes), type and flags (2 bytes).
pub(crate) const HEADER_LEN: usize = 6;
/// The 24-bit metadata length before the metadata of a payload-bearing frame.
pub(crate) const METADATA_LEN_LEN: usize = 3;
/// The largest 31-bit value (stream ids, request n, keepalive times): 2^31 − 1.
pub(crate) const MAX_U31: u32 = 0x7FFF_FFFF;

/// The protocol version this implementation speaks: 1.0.
pub(crate) const VERSION: (u16, u16) = (1, 0);

/// The frame types of RSocket 1.0.
pub(crate) mod ty {
    pub(crate) const SETUP: u8 = 0x01;
    pub(crate) const LEASE: u8 = 0x02;
    pub(crate) const KEEPALIVE: u8 = 0x03;
    pub(crate) const REQUEST_RESPONSE: u8 = 0x04;
    pub(crate) const REQUEST_FNF: u8 = 0x05;
    pub(crate) const REQUEST_STREAM: u8 = 0x06;
    pub(crate) const REQUEST_CHANNEL: u8 = 0x07;
    pub(crate) const REQUEST_N: u8 = 0x08;
    pub(crate) const CANCEL: u8 = 0x09;
    pub(crate) const PAYLOAD: u8 = 0x0A;
    pub(crate) const ERROR: u8 = 0x0B;
    pub(crate) const METADATA_PUSH: u8 = 0x0C;
    pub(crate) const RESUME: u8 = 0x0D;
    pub(crate) const RESUME_OK: u8 = 0x0E;
}

/// The flag bits (the low 10 bits of the type-and-flags field). The same bit means different
/// things in different frame types, hence the several names.
pub(crate) mod flag {
    /// (I)gnore the frame if not understood.
    pub(crate) const IGNORE: u16 = 0x200;
    /// (M)etadata present.
    pub(crate) const METADATA: u16 = 0x100;
    /// (F)ollows: more fragments follow (request frames and PAYLOAD).
    pub(crate) const FOLLOWS: u16 = 0x80;
    /// (R)espond: a KEEPALIVE that asks for an answer.
    pub(crate) const RESPOND: u16 = 0x80;
    /// (R)esume enable: a SETUP with a resume token.
    pub(crate) const RESUME_ENABLE: u16 = 0x80;
    /// (L)ease: a SETUP whose client honours LEASE.
    pub(crate) const LEASE: u16 = 0x40;
    /// (C)omplete (REQUEST_CHANNEL and PAYLOAD).
    pub(crate) const COMPLETE: u16 = 0x40;
    /// (N)ext (PAYLOAD).
    pub(crate) const NEXT: u16 = 0x20;
}

/// The fields of a SETUP frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Setup {
    /// Major and minor protocol version.
    pub(crate) version: (u16, u16),
    /// Time between the client's KEEPALIVE frames, in milliseconds (> 0).
    pub(crate) keepalive_ms: u32,
    /// How long the client lets the server stay silent, in milliseconds (> 0).
    pub(crate) lifetime_ms: u32,
    /// The resume token, when the R flag is set (resumption is not supported: such a SETUP is
    /// rejected).
    pub(crate) resume_token: Option<Bytes>,
    /// The L flag: the client honours LEASE.
    pub(crate) lease: bool,
    /// The metadata MIME type (UTF-8, checked).
    pub(crate) metadata_mime: String,
    /// The data MIME type (UTF-8, checked).
    pub(crate) data_mime: String,
    /// The setup payload.
    pub(crate) payload: Payload,
}

/// One decoded frame. Stream ids are 31-bit; `follows` is the F flag of a fragment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// SETUP (stream 0).
    Setup(Box<Setup>),
    /// LEASE (stream 0): `requests` may be sent within `ttl_ms` from its reception.
    Lease {
        /// Time to live, in milliseconds.
        ttl_ms: u32,
        /// Number of requests allowed.
        requests: u32,
        /// Optional metadata.
        metadata: Option<Bytes>,
    },
    /// KEEPALIVE (stream 0).
    Keepalive {
        /// The R flag: answer with a KEEPALIVE without it.
        respond: bool,
        /// Last received position (resumption; 0 when unsupported).
        position: u64,
        /// Data, echoed in the answer.
        data: Bytes,
    },
    /// REQUEST_RESPONSE.
    RequestResponse {
        /// Stream id.
        id: u32,
        /// F flag.
        follows: bool,
        /// The request.
        payload: Payload,
    },
    /// REQUEST_FNF.
    RequestFnf {
        /// Stream id.
        id: u32,
        /// F flag.
        follows: bool,
        /// The request.
        payload: Payload,
    },
    /// REQUEST_STREAM.
    RequestStream {
        /// Stream id.
        id: u32,
        /// F flag.
        follows: bool,
        /// Initial request n (validated by the connection: must be > 0).
        n: u32,
        /// The request.
        payload: Payload,
    },
    /// REQUEST_CHANNEL.
    RequestChannel {
        /// Stream id.
        id: u32,
        /// F flag.
        follows: bool,
        /// C flag: the requester's half is already complete.
        complete: bool,
        /// Initial request n (validated by the connection: must be > 0).
        n: u32,
        /// The first payload.
        payload: Payload,
    },
    /// REQUEST_N (n > 0: the decoder rejects 0).
    RequestN {
        /// Stream id.
        id: u32,
        /// Credit.
        n: u32,
    },
    /// CANCEL.
    Cancel {
        /// Stream id.
        id: u32,
    },
    /// PAYLOAD.
    Payload {
        /// Stream id.
        id: u32,
        /// F flag.
        follows: bool,
        /// C flag.
        complete: bool,
        /// N flag.
        next: bool,
        /// Data and metadata (empty without N).
        payload: Payload,
    },
    /// ERROR.
    Error {
        /// Stream id (0: the connection).
        id: u32,
        /// Error code.
        code: ErrorCode,
        /// Error data (UTF-8 text by convention; kept as bytes).
        data: Bytes,
    },
    /// METADATA_PUSH (stream 0).
    MetadataPush {
        /// The metadata.
        metadata: Bytes,
    },
    /// RESUME or RESUME_OK: parsed only to be answered (resumption is not supported).
    Resume {
        /// RESUME (true) or RESUME_OK (false).
        resume: bool,
    },
    /// A frame type this implementation does not know (EXT, reserved values).
    Unknown {
        /// Stream id.
        id: u32,
        /// The frame type.
        ty: u8,
        /// The I flag: the frame may be ignored.
        ignore: bool,
    },
}

impl Frame {
    /// The F flag: a fragment with more to follow (payload-bearing frames only).
    pub(crate) fn follows(&self) -> bool {
        match self {
            Frame::RequestResponse { follows, .. }
            | Frame::RequestFnf { follows, .. }
            | Frame::RequestStream { follows, .. }
            | Frame::RequestChannel { follows, .. }
            | Frame::Payload { follows, .. } => *follows,
            _ => false,
        }
    }

    /// Whether this is a frame of a stream (a request, REQUEST_N, CANCEL, PAYLOAD, or an
    /// ERROR on a stream other than 0), for [`dispatch`](crate::rsocket::dispatch); the
    /// others are the connection's own.
    pub(crate) fn is_stream_frame(&self) -> bool {
        matches!(
            self,
            Frame::RequestStream { .. }
                | Frame::RequestChannel { .. }
                | Frame::RequestResponse { .. }
                | Frame::RequestFnf { .. }
                | Frame::RequestN { .. }
                | Frame::Cancel { .. }
                | Frame::Payload { .. }
                | Frame::Error { id: 1.., .. }
        )
    }

    /// The frame's stream id.
    pub(crate) fn stream_id(&self) -> u32 {
        match self {
            Frame::Setup(_)
            | Frame::Lease { .. }
            | Frame::Keepalive { .. }
            | Frame::MetadataPush { .. }
            | Frame::Resume { .. } => 0,
            Frame::RequestResponse { id, .. }
            | Frame::RequestFnf { id, .. }
            | Frame::RequestStream { id, .. }
            | Frame::RequestChannel { id, .. }
            | Frame::RequestN { id, .. }
            | Frame::Cancel { id }
            | Frame::Payload { id, .. }
            | Frame::Error { id, .. }
            | Frame::Unknown { id, .. } => *id,
        }
    }
}

/// A frame the decoder refused: the ERROR frame to answer with (always on stream 0: a
/// malformed frame ends the connection) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub(crate) struct FrameError {
    /// `CONNECTION_ERROR`, or `INVALID_SETUP` for a malformed SETUP.
    pub(crate) code: ErrorCode,
    /// What was wrong, sent as the ERROR frame's data.
    pub(crate) message: String,
}

impl FrameError {
    /// A `CONNECTION_ERROR` with `message`.
    pub(crate) fn connection(message: impl Into<String>) -> Self {
        FrameError {
            code: ErrorCode::ConnectionError,
            message: message.into(),
        }
    }

    /// An `INVALID_SETUP` with `message`.
    pub(crate) fn setup(message: impl Into<String>) -> Self {
        FrameError {
            code: ErrorCode::InvalidSetup,
            message: message.into(),
        }
    }
}
