//! The TCP framing: tokio-util's [`Decoder`]/[`Encoder`] for RSocket frames behind the 24-bit
//! length prefix (spec, "Framing Format"), driven by `FramedRead` on the connection's read
//! half.
//!
//! **Bounds.** The decoder refuses a length above its `max_frame` (at most the spec's
//! 16,777,215) before buffering the frame, so one connection's read buffer holds at most one
//! frame of `max_frame` bytes plus what one read brings. A length shorter than a frame header
//! is a truncated frame. Both are `CONNECTION_ERROR`s.

use bytes::BytesMut;
use tokio_util::codec::{Decoder, Encoder};

use super::frame::{decode::decode_buffered, encode::encode, Frame, FrameError};

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
        Ok(Some(decode_buffered(src, len)?))
    }
}

impl Encoder<Frame> for FrameCodec {
    type Error = std::io::Error;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        encode(&frame, self.mtu, dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use bytes::{BufMut, Bytes, BytesMut};
    use tokio_util::codec::{Decoder, Encoder};

    use super::FrameCodec;
    use crate::rsocket::frame::{decode::decode, Frame};
    use crate::rsocket::payload::Payload;

    /// Each frame through the codec (the borrowed-bytes path for REQUEST_RESPONSE and
    /// PAYLOAD) and through the general `decode` of its bytes: the same frame or the same
    /// error, and the same bytes left in the buffer.
    fn same_as_general(raw: &[u8]) {
        let mut framed = BytesMut::new();
        framed.put_slice(&(raw.len() as u32).to_be_bytes()[1..]);
        framed.put_slice(raw);
        framed.put_slice(b"rest");
        let mut codec = FrameCodec::new(1 << 20, 1 << 20);
        let ours = codec.decode(&mut framed).map_err(|e| e.to_string());
        let general = decode(Bytes::copy_from_slice(raw)).map_err(|e| e.to_string());
        assert_eq!(
            ours.map(|f| f.expect("a whole frame")),
            general,
            "{raw:02X?}"
        );
        assert_eq!(&framed[..], b"rest");
    }

    fn encoded(frame: &Frame) -> Vec<u8> {
        let mut buf = BytesMut::new();
        FrameCodec::new(1 << 20, 1 << 20)
            .encode(frame.clone(), &mut buf)
            .unwrap();
        buf[3..].to_vec()
    }

    #[test]
    fn hot_frames_decode_as_the_general_path_does() {
        let payloads = [
            Payload::from("data"),
            Payload::new("d", Some(Bytes::from_static(b"meta"))),
            Payload::new("", Some(Bytes::new())),
            Payload::default(),
        ];
        let mut checked = 0;
        for p in &payloads {
            for (follows, complete, next) in [
                (false, true, true),
                (false, false, true),
                (true, false, true),
                (false, true, false),
            ] {
                same_as_general(&encoded(&Frame::Payload {
                    id: 7,
                    follows,
                    complete,
                    next,
                    payload: p.clone(),
                }));
                checked += 1;
            }
            same_as_general(&encoded(&Frame::RequestResponse {
                id: 0x7FFF_FFFF,
                follows: false,
                payload: p.clone(),
            }));
            checked += 1;
        }
        // Malformed: F and C both set (F ignored), a metadata length past the end, a
        // truncated metadata length, a short header, the stream id's reserved bit.
        for raw in [
            &[0, 0, 0, 7, 0x28, 0xC0, b'x'][..],
            &[0, 0, 0, 7, 0x29, 0x00, 0, 0, 9, b'm'][..],
            &[0, 0, 0, 7, 0x11, 0x00, 0, 0][..],
            &[0, 0, 0, 7, 0x28][..],
            &[0x80, 0, 0, 7, 0x10, 0x00, b'q'][..],
        ] {
            same_as_general(raw);
            checked += 1;
        }
        assert_eq!(checked, 25);
    }
}
