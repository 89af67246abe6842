//! Parsing one frame (the bytes after the TCP length prefix) into a [`Frame`], without copying:
//! payloads are slices of the frame's [`Bytes`].
//!
//! What the decoder rejects (a [`FrameError`], answered with an ERROR frame on stream 0 and the
//! end of the connection): a frame shorter than its header or than its type's fixed fields
//! (truncated), a metadata length beyond the frame (the spec's MUST), a REQUEST_N of 0, a
//! SETUP with a zero keepalive time or lifetime or MIME types that are not UTF-8
//! (`INVALID_SETUP`). Unknown frame types come back as [`Frame::Unknown`], for the connection
//! to ignore (I flag) or refuse.

use bytes::{Buf, Bytes, BytesMut};

use super::{flag, ty, Frame, FrameError, Setup, HEADER_LEN, MAX_U31};
use crate::rsocket::error::ErrorCode;
use crate::rsocket::payload::Payload;

/// Parses the frame of `len` bytes that follows the 3-byte length prefix at the front of
/// `src`, and takes both out of `src`. The two frames of a request_response's round trip
/// (REQUEST_RESPONSE and PAYLOAD, whole) are read from the borrowed bytes, and only their
/// metadata and data are split off as [`Bytes`]; every other frame (and any that is
/// malformed) goes through [`decode`], with the same result.
pub(crate) fn decode_buffered(src: &mut BytesMut, len: usize) -> Result<Frame, FrameError> {
    if let Some(frame) = decode_hot(src, len) {
        return Ok(frame);
    }
    src.advance(3);
    decode(src.split_to(len).freeze())
}

/// [`decode_buffered`]'s hot frames, or `None` (`src` untouched) for the general path.
#[inline]
fn decode_hot(src: &mut BytesMut, len: usize) -> Option<Frame> {
    let b = src.get(3..3 + len)?;
    let head: [u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
    let id = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) & MAX_U31;
    let type_flags = u16::from_be_bytes([head[4], head[5]]);
    let frame_type = (type_flags >> 10) as u8;
    let flags = type_flags & 0x3FF;
    if frame_type != ty::PAYLOAD && frame_type != ty::REQUEST_RESPONSE {
        return None;
    }
    let mut at = HEADER_LEN;
    let metadata_len = if flags & flag::METADATA != 0 {
        let m = b.get(at..at + 3)?;
        at += 3;
        let m_len = ((m[0] as usize) << 16) | ((m[1] as usize) << 8) | m[2] as usize;
        if m_len > len - at {
            return None; // malformed: `decode` says how
        }
        Some(m_len)
    } else {
        None
    };
    // One split of the read buffer (the costly one); the parts are views of it.
    let mut body = src.split_to(3 + len).freeze();
    body.advance(3 + at);
    let metadata = metadata_len.map(|m_len| body.split_to(m_len));
    let payload = Payload {
        data: body,
        metadata,
    };
    let follows = flags & flag::FOLLOWS != 0;
    Some(if frame_type == ty::PAYLOAD {
        let complete = flags & flag::COMPLETE != 0;
        Frame::Payload {
            id,
            // "A PAYLOAD with both F and C flags set implicitly ignores the F flag."
            follows: follows && !complete,
            complete,
            next: flags & flag::NEXT != 0,
            payload,
        }
    } else {
        Frame::RequestResponse {
            id,
            follows,
            payload,
        }
    })
}

/// Parses one frame.
pub(crate) fn decode(mut frame: Bytes) -> Result<Frame, FrameError> {
    if frame.len() < HEADER_LEN {
        return Err(FrameError::connection(format!(
            "truncated frame: {} bytes, shorter than the 6-byte header",
            frame.len()
        )));
    }
    let id = frame.get_u32() & MAX_U31;
    let type_flags = frame.get_u16();
    let frame_type = (type_flags >> 10) as u8;
    let flags = type_flags & 0x3FF;
    let has_metadata = flags & flag::METADATA != 0;
    let mut r = Reader {
        bytes: frame,
        frame_type,
    };
    Ok(match frame_type {
        ty::SETUP => return decode_setup(r, flags),
        ty::LEASE => {
            let ttl_ms = r.u31()?;
            let requests = r.u31()?;
            let metadata = has_metadata.then(|| r.rest());
            Frame::Lease {
                ttl_ms,
                requests,
                metadata,
            }
        }
        ty::KEEPALIVE => {
            let position = r.u64()? & (u64::MAX >> 1);
            Frame::Keepalive {
                respond: flags & flag::RESPOND != 0,
                position,
                data: r.rest(),
            }
        }
        ty::REQUEST_RESPONSE => Frame::RequestResponse {
            id,
            follows: flags & flag::FOLLOWS != 0,
            payload: r.payload(has_metadata)?,
        },
        ty::REQUEST_FNF => Frame::RequestFnf {
            id,
            follows: flags & flag::FOLLOWS != 0,
            payload: r.payload(has_metadata)?,
        },
        ty::REQUEST_STREAM => {
            let n = r.u31()?;
            Frame::RequestStream {
                id,
                follows: flags & flag::FOLLOWS != 0,
                n,
                payload: r.payload(has_metadata)?,
            }
        }
        ty::REQUEST_CHANNEL => {
            let n = r.u31()?;
            Frame::RequestChannel {
                id,
                follows: flags & flag::FOLLOWS != 0,
                complete: flags & flag::COMPLETE != 0,
                n,
                payload: r.payload(has_metadata)?,
            }
        }
        ty::REQUEST_N => {
            let n = r.u31()?;
            if n == 0 {
                return Err(FrameError::connection(format!(
                    "REQUEST_N of 0 on stream {id}: the spec requires n > 0 \
                     (Reactive Streams rule 3.9)"
                )));
            }
            Frame::RequestN { id, n }
        }
        ty::CANCEL => Frame::Cancel { id },
        ty::PAYLOAD => {
            let next = flags & flag::NEXT != 0;
            let complete = flags & flag::COMPLETE != 0;
            Frame::Payload {
                id,
                // "A PAYLOAD with both F and C flags set implicitly ignores the F flag."
                follows: flags & flag::FOLLOWS != 0 && !complete,
                complete,
                next,
                payload: r.payload(has_metadata)?,
            }
        }
        ty::ERROR => {
            let code = ErrorCode::from_code(r.u32()?);
            Frame::Error {
                id,
                code,
                data: r.rest(),
            }
        }
        ty::METADATA_PUSH => Frame::MetadataPush { metadata: r.rest() },
        ty::RESUME => Frame::Resume { resume: true },
        ty::RESUME_OK => Frame::Resume { resume: false },
        other => Frame::Unknown {
            id,
            ty: other,
            ignore: flags & flag::IGNORE != 0,
        },
    })
}

/// SETUP: a malformed one is `INVALID_SETUP`.
fn decode_setup(mut r: Reader, flags: u16) -> Result<Frame, FrameError> {
    let setup_err = |e: FrameError| FrameError::setup(e.message);
    let major = r.u16().map_err(setup_err)?;
    let minor = r.u16().map_err(setup_err)?;
    let keepalive_ms = r.u31().map_err(setup_err)?;
    let lifetime_ms = r.u31().map_err(setup_err)?;
    if keepalive_ms == 0 || lifetime_ms == 0 {
        return Err(FrameError::setup(
            "SETUP with a keepalive interval or max lifetime of 0 (both must be > 0)",
        ));
    }
    let resume_token = if flags & flag::RESUME_ENABLE != 0 {
        let len = r.u16().map_err(setup_err)? as usize;
        Some(r.take(len).map_err(setup_err)?)
    } else {
        None
    };
    let metadata_mime = r.mime().map_err(setup_err)?;
    let data_mime = r.mime().map_err(setup_err)?;
    let payload = r.payload(flags & flag::METADATA != 0).map_err(setup_err)?;
    Ok(Frame::Setup(Box::new(Setup {
        version: (major, minor),
        keepalive_ms,
        lifetime_ms,
        resume_token,
        lease: flags & flag::LEASE != 0,
        metadata_mime,
        data_mime,
        payload,
    })))
}

/// A bounds-checked reader over the frame's body.
struct Reader {
    bytes: Bytes,
    frame_type: u8,
}

impl Reader {
    fn need(&self, n: usize) -> Result<(), FrameError> {
        if self.bytes.remaining() < n {
            Err(FrameError::connection(format!(
                "truncated frame of type 0x{:02X}: {} bytes left where {n} are needed",
                self.frame_type,
                self.bytes.remaining()
            )))
        } else {
            Ok(())
        }
    }

    fn u16(&mut self) -> Result<u16, FrameError> {
        self.need(2)?;
        Ok(self.bytes.get_u16())
    }

    fn u32(&mut self) -> Result<u32, FrameError> {
        self.need(4)?;
        Ok(self.bytes.get_u32())
    }

    fn u31(&mut self) -> Result<u32, FrameError> {
        Ok(self.u32()? & MAX_U31)
    }

    fn u64(&mut self) -> Result<u64, FrameError> {
        self.need(8)?;
        Ok(self.bytes.get_u64())
    }

    fn take(&mut self, n: usize) -> Result<Bytes, FrameError> {
        self.need(n)?;
        Ok(self.bytes.split_to(n))
    }

    fn rest(&mut self) -> Bytes {
        std::mem::take(&mut self.bytes)
    }

    /// A MIME type: a length byte, then that many bytes of UTF-8.
    fn mime(&mut self) -> Result<String, FrameError> {
        self.need(1)?;
        let len = self.bytes.get_u8() as usize;
        let raw = self.take(len)?;
        match std::str::from_utf8(&raw) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(FrameError::setup(format!(
                "SETUP with a MIME type that is not UTF-8 ({e})"
            ))),
        }
    }

    /// Metadata (24-bit length first, when the M flag is set) and data (the rest).
    fn payload(&mut self, has_metadata: bool) -> Result<Payload, FrameError> {
        let metadata = if has_metadata {
            self.need(3)?;
            let len = ((self.bytes.get_u16() as usize) << 8) | self.bytes.get_u8() as usize;
            if len > self.bytes.remaining() {
                return Err(FrameError::connection(format!(
                    "metadata length {len} exceeds the {} bytes left in the frame of type 0x{:02X}",
                    self.bytes.remaining(),
                    self.frame_type
                )));
            }
            Some(self.bytes.split_to(len))
        } else {
            None
        };
        Ok(Payload {
            data: self.rest(),
            metadata,
        })
    }
}
