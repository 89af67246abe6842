//! The TCP framing: tokio-util's [`Decoder`]/[`Encoder`] for RSocket frames behind the 24-bit
//! length prefix (spec, "Framing Format"), driven by `FramedRead` on the connection's read
//! half.
//!
//! **Bounds.** The decoder refuses a length above its `max_frame` (at most the spec's
//! 16,777,215) before buffering the frame, so one connection's read buffer holds at most one
//! frame of `max_frame` bytes plus what one read brings. A length shorter than a frame header
//! is a truncated frame. Both are `CONNECTION_ERROR`s.

use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::frame::{decode::decode, encode::encode, Frame, FrameError};

/// The RSocket-over-TCP codec.
#[derive(Debug, Clone)]
pub(crate) struct FrameCodec {
    /// The largest frame accepted (length prefix excluded).
    max_frame: usize,
    /// The MTU at which outgoing payloads are fragmented.
    mtu: usize,
}

impl FrameCodec {
    /// A codec accepting frames up to `max_frame` bytes and fragmenting at `mtu`.
    pub(crate) fn new(max_frame: usize, mtu: usize) -> Self {
        FrameCodec { max_frame, mtu }
    }
}

/// Why reading frames stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CodecError {
    /// A malformed frame: answer with its ERROR frame, then close.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The transport failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, CodecError> {
        if src.len() < 3 {
            return Ok(None);
        }
        let len = ((src[0] as usize) << 16) | ((src[1] as usize) << 8) | src[2] as usize;
        if len > self.max_frame {
            return Err(FrameError::connection(format!(
                "frame length {len} exceeds this endpoint's limit of {} bytes",
                self.max_frame
            ))
            .into());
        }
        if src.len() < 3 + len {
            src.reserve(3 + len - src.len());
            return Ok(None);
        }
        src.advance(3);
        let frame = src.split_to(len).freeze();
        Ok(Some(decode(frame)?))
    }
}

impl Encoder<Frame> for FrameCodec {
    type Error = std::io::Error;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        encode(&frame, self.mtu, dst);
        Ok(())
    }
}
