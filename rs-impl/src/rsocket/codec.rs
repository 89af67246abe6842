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
        Ok(Some(decode(src, len)?))
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
    use crate::rsocket::error::ErrorCode;
    use crate::rsocket::frame::{Frame, Setup};
    use crate::rsocket::payload::Payload;

    /// `raw` (a frame without its length prefix) through the codec, with more bytes after
    /// it: what it decodes to; the frame is taken out of the buffer (left there when it is
    /// malformed: the connection ends on it).
    fn decoded(raw: &[u8]) -> Result<Frame, String> {
        let mut framed = BytesMut::new();
        framed.put_slice(&(raw.len() as u32).to_be_bytes()[1..]);
        framed.put_slice(raw);
        framed.put_slice(b"rest");
        let whole = framed.clone();
        let mut codec = FrameCodec::new(1 << 20, 1 << 20);
        let frame = codec.decode(&mut framed).map_err(|e| e.to_string());
        let left: &[u8] = if frame.is_ok() { b"rest" } else { &whole };
        assert_eq!(&framed[..], left, "{raw:02X?}");
        frame.map(|f| f.expect("a whole frame"))
    }

    fn encoded(frame: &Frame) -> Vec<u8> {
        let mut buf = BytesMut::new();
        FrameCodec::new(1 << 20, 1 << 20)
            .encode(frame.clone(), &mut buf)
            .unwrap();
        buf[3..].to_vec()
    }

    /// Every frame type this side writes decodes to itself, with and without metadata and
    /// data (empty bytes take no split of the buffer: the same frame). F is the encoder's
    /// (it fragments at the MTU): a frame with F is one of the raw cases below.
    #[test]
    fn every_frame_type_decodes_to_what_was_encoded() {
        let payloads = [
            Payload::from("data"),
            Payload::new("d", Some(Bytes::from_static(b"meta"))),
            Payload::new("", Some(Bytes::new())),
            Payload::default(),
        ];
        let mut frames = Vec::new();
        for p in &payloads {
            for (complete, next) in [(true, true), (false, true), (true, false)] {
                frames.push(Frame::Payload {
                    id: 7,
                    follows: false,
                    complete,
                    next,
                    payload: p.clone(),
                });
            }
            frames.push(Frame::RequestResponse {
                id: 0x7FFF_FFFF,
                follows: false,
                payload: p.clone(),
            });
            frames.push(Frame::RequestFnf {
                id: 3,
                follows: false,
                payload: p.clone(),
            });
            frames.push(Frame::RequestStream {
                id: 5,
                follows: false,
                n: 0x7FFF_FFFF,
                payload: p.clone(),
            });
            frames.push(Frame::RequestChannel {
                id: 9,
                follows: false,
                complete: true,
                n: 1,
                payload: p.clone(),
            });
            for resume_token in [None, Some(Bytes::from_static(b"token"))] {
                frames.push(Frame::Setup(Box::new(Setup {
                    version: (1, 0),
                    keepalive_ms: 20_000,
                    lifetime_ms: 90_000,
                    resume_token,
                    lease: true,
                    metadata_mime: "message/x.rsocket.composite-metadata.v0".into(),
                    data_mime: "application/octet-stream".into(),
                    payload: p.clone(),
                })));
            }
        }
        for bytes in [Bytes::new(), Bytes::from_static(b"bytes")] {
            frames.push(Frame::Keepalive {
                respond: true,
                position: 42,
                data: bytes.clone(),
            });
            frames.push(Frame::Error {
                id: 0,
                code: ErrorCode::ConnectionError,
                data: bytes.clone(),
            });
            frames.push(Frame::MetadataPush {
                metadata: bytes.clone(),
            });
            frames.push(Frame::Lease {
                ttl_ms: 1_000,
                requests: 10,
                metadata: Some(bytes),
            });
        }
        frames.push(Frame::Lease {
            ttl_ms: 1_000,
            requests: 10,
            metadata: None,
        });
        frames.push(Frame::RequestN { id: 11, n: 5 });
        frames.push(Frame::Cancel { id: 13 });
        for frame in &frames {
            assert_eq!(decoded(&encoded(frame)).as_ref(), Ok(frame));
        }
        assert_eq!(frames.len(), 4 * 9 + 2 * 4 + 3);
    }

    /// Frames only read (RESUME, RESUME_OK, unknown types) and malformed ones: the frame or
    /// the error.
    #[test]
    fn read_only_and_malformed_frames() {
        let cases: [(&[u8], Result<Frame, &str>); 11] = [
            // A fragment: F and N.
            (
                &[0, 0, 0, 7, 0x28, 0xA0, b'x'],
                Ok(Frame::Payload {
                    id: 7,
                    follows: true,
                    complete: false,
                    next: true,
                    payload: Payload::from("x"),
                }),
            ),
            (
                &[0, 0, 0, 0, 0x34, 0x00, 1],
                Ok(Frame::Resume { resume: true }),
            ),
            (
                &[0, 0, 0, 0, 0x38, 0x00],
                Ok(Frame::Resume { resume: false }),
            ),
            (
                &[0, 0, 0, 1, 0xFE, 0x00, 1, 2],
                Ok(Frame::Unknown {
                    id: 1,
                    ty: 0x3F,
                    ignore: true,
                }),
            ),
            // F and C both set: F ignored.
            (
                &[0, 0, 0, 7, 0x28, 0xC0, b'x'],
                Ok(Frame::Payload {
                    id: 7,
                    follows: false,
                    complete: true,
                    next: false,
                    payload: Payload::from("x"),
                }),
            ),
            // The stream id's reserved bit.
            (
                &[0x80, 0, 0, 7, 0x10, 0x00, b'q'],
                Ok(Frame::RequestResponse {
                    id: 7,
                    follows: false,
                    payload: Payload::from("q"),
                }),
            ),
            (
                &[0, 0, 0, 7, 0x29, 0x00, 0, 0, 9, b'm'],
                Err("metadata length 9 exceeds the 1 bytes left in the frame of type 0x0A"),
            ),
            (
                &[0, 0, 0, 7, 0x11, 0x00, 0, 0],
                Err("truncated frame of type 0x04: 2 bytes left where 3 are needed"),
            ),
            (
                &[0, 0, 0, 7, 0x28],
                Err("truncated frame: 5 bytes, shorter than the 6-byte header"),
            ),
            (
                &[0, 0, 0, 7, 0x20, 0x00, 0, 0, 0, 0],
                Err("REQUEST_N of 0 on stream 7"),
            ),
            (
                &[
                    0, 0, 0, 0, 0x04, 0x00, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0xFF, 0,
                ],
                Err("SETUP with a MIME type that is not UTF-8"),
            ),
        ];
        let mut checked = 0;
        for (raw, want) in cases {
            match (decoded(raw), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{raw:02X?}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{raw:02X?}: {got}"),
                (got, want) => panic!("{raw:02X?}: {got:?}, expected {want:?}"),
            }
            checked += 1;
        }
        assert_eq!(checked, 11);
    }
}
