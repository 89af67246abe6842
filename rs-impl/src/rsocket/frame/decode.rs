//! Parsing one frame (the bytes after the TCP length prefix) into a [`Frame`], without copying:
//! payloads are views of the read buffer.
//!
//! **One pass, one split.** [`decode`] reads the header and every fixed field of every frame
//! type from the borrowed read buffer; only then, for a frame that carries bytes (a payload,
//! metadata, data, a resume token), is the frame split off the buffer once, and its parts
//! are views of that split (a payload's metadata one more view, its data the rest). A frame
//! without bytes (REQUEST_N, CANCEL, RESUME, an unknown type) is only skipped in the buffer;
//! a malformed one is left there (the connection ends on it).
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
/// `src` (`src` holds at least `3 + len` bytes), and takes both out of `src`. The fields are
/// read from the borrowed buffer, then the frame's bytes (if any) are split off once. A
/// malformed frame is left in `src` (the connection ends on it).
#[inline]
pub(crate) fn decode(src: &mut BytesMut, len: usize) -> Result<Frame, FrameError> {
    let b = &src[3..3 + len];
    if b.len() < HEADER_LEN {
        return Err(FrameError::connection(format!(
            "truncated frame: {} bytes, shorter than the 6-byte header",
            b.len()
        )));
    }
    let id = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & MAX_U31;
    let type_flags = u16::from_be_bytes([b[4], b[5]]);
    let frame_type = (type_flags >> 10) as u8;
    let flags = type_flags & 0x3FF;
    let has_metadata = flags & flag::METADATA != 0;
    let follows = flags & flag::FOLLOWS != 0;
    let mut r = Reader {
        b,
        at: HEADER_LEN,
        frame_type,
    };
    // The hot two (a request_response's round trip) here, with one split of the buffer;
    // the other types in `decode_rest`, through the same reader and helpers.
    if frame_type == ty::PAYLOAD || frame_type == ty::REQUEST_RESPONSE {
        let tail = r.payload(has_metadata)?;
        let payload = payload(src, len, tail);
        return Ok(if frame_type == ty::PAYLOAD {
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
        });
    }
    decode_rest(src, len, id, frame_type, flags)
}

/// [`decode`]'s frame types other than PAYLOAD and REQUEST_RESPONSE, after the header
/// (`id`, `frame_type`, `flags`).
#[inline(never)]
fn decode_rest(
    src: &mut BytesMut,
    len: usize,
    id: u32,
    frame_type: u8,
    flags: u16,
) -> Result<Frame, FrameError> {
    let has_metadata = flags & flag::METADATA != 0;
    let follows = flags & flag::FOLLOWS != 0;
    let mut r = Reader {
        b: &src[3..3 + len],
        at: HEADER_LEN,
        frame_type,
    };
    Ok(match frame_type {
        ty::SETUP => return parse_setup(r, flags).map(|(head, tail)| setup(src, len, head, tail)),
        ty::LEASE => {
            let ttl_ms = r.u31()?;
            let requests = r.u31()?;
            let at = r.at;
            Frame::Lease {
                ttl_ms,
                requests,
                metadata: if has_metadata {
                    Some(rest(src, len, at))
                } else {
                    skip(src, len);
                    None
                },
            }
        }
        ty::KEEPALIVE => {
            let position = r.u64()? & (u64::MAX >> 1);
            let at = r.at;
            Frame::Keepalive {
                respond: flags & flag::RESPOND != 0,
                position,
                data: rest(src, len, at),
            }
        }
        ty::REQUEST_FNF => {
            let tail = r.payload(has_metadata)?;
            Frame::RequestFnf {
                id,
                follows,
                payload: payload(src, len, tail),
            }
        }
        ty::REQUEST_STREAM => {
            let n = r.u31()?;
            let tail = r.payload(has_metadata)?;
            Frame::RequestStream {
                id,
                follows,
                n,
                payload: payload(src, len, tail),
            }
        }
        ty::REQUEST_CHANNEL => {
            let n = r.u31()?;
            let tail = r.payload(has_metadata)?;
            Frame::RequestChannel {
                id,
                follows,
                complete: flags & flag::COMPLETE != 0,
                n,
                payload: payload(src, len, tail),
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
            skip(src, len);
            Frame::RequestN { id, n }
        }
        ty::CANCEL => {
            skip(src, len);
            Frame::Cancel { id }
        }
        ty::ERROR => {
            let code = ErrorCode::from_code(r.u32()?);
            let at = r.at;
            Frame::Error {
                id,
                code,
                data: rest(src, len, at),
            }
        }
        ty::METADATA_PUSH => Frame::MetadataPush {
            metadata: rest(src, len, HEADER_LEN),
        },
        ty::RESUME | ty::RESUME_OK => {
            skip(src, len);
            Frame::Resume {
                resume: frame_type == ty::RESUME,
            }
        }
        other => {
            skip(src, len);
            Frame::Unknown {
                id,
                ty: other,
                ignore: flags & flag::IGNORE != 0,
            }
        }
    })
}

/// Where a payload lies in its frame's body: where its metadata (when M is set: after the
/// 24-bit metadata length) or else its data starts, and the metadata's length.
#[derive(Clone, Copy)]
struct Tail {
    at: usize,
    metadata: Option<usize>,
}

/// Takes the frame out of `src`: it has no bytes to keep.
#[inline(always)]
fn skip(src: &mut BytesMut, len: usize) {
    src.advance(3 + len);
}

/// Takes the frame out of `src` and returns its body from `at` on: the one split of the
/// read buffer (none when that is empty).
#[inline(always)]
fn rest(src: &mut BytesMut, len: usize, at: usize) -> Bytes {
    if at == len {
        src.advance(3 + len);
        return Bytes::new();
    }
    let mut body = src.split_to(3 + len).freeze();
    body.advance(3 + at);
    body
}

/// Takes the frame out of `src` and returns its payload: views of the one split.
#[inline(always)]
fn payload(src: &mut BytesMut, len: usize, tail: Tail) -> Payload {
    let mut body = rest(src, len, tail.at);
    let metadata = tail.metadata.map(|m_len| body.split_to(m_len));
    Payload {
        data: body,
        metadata,
    }
}

/// A SETUP without its bytes, and where its resume token lies in the frame's body.
type SetupHead = (Box<Setup>, Option<std::ops::Range<usize>>);

/// The fields of a SETUP, read from the borrowed body; a malformed one is `INVALID_SETUP`.
/// Returns the SETUP without its bytes, and where they are (its resume token, its payload).
fn parse_setup(mut r: Reader<'_>, flags: u16) -> Result<(SetupHead, Tail), FrameError> {
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
    let token = if flags & flag::RESUME_ENABLE != 0 {
        let len = r.u16().map_err(setup_err)? as usize;
        Some(r.skip(len).map_err(setup_err)?)
    } else {
        None
    };
    let metadata_mime = r.mime()?;
    let data_mime = r.mime()?;
    let tail = r.payload(flags & flag::METADATA != 0).map_err(setup_err)?;
    let setup = Setup {
        version: (major, minor),
        keepalive_ms,
        lifetime_ms,
        resume_token: None,
        lease: flags & flag::LEASE != 0,
        metadata_mime,
        data_mime,
        payload: Payload::default(),
    };
    Ok(((Box::new(setup), token), tail))
}

/// The SETUP frame with its bytes: its resume token and payload, views of one split.
fn setup(src: &mut BytesMut, len: usize, (mut setup, token): SetupHead, tail: Tail) -> Frame {
    let mut body = src.split_to(3 + len).freeze();
    body.advance(3);
    setup.resume_token = token.map(|range| body.slice(range));
    body.advance(tail.at);
    let metadata = tail.metadata.map(|m_len| body.split_to(m_len));
    setup.payload = Payload {
        data: body,
        metadata,
    };
    Frame::Setup(setup)
}

/// A bounds-checked reader over the borrowed body of one frame.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    frame_type: u8,
}

impl Reader<'_> {
    #[inline(always)]
    fn remaining(&self) -> usize {
        self.b.len() - self.at
    }

    #[inline(always)]
    fn need(&self, n: usize) -> Result<(), FrameError> {
        if self.remaining() < n {
            return Err(self.truncated(n));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn metadata_too_long(&self, len: usize) -> FrameError {
        FrameError::connection(format!(
            "metadata length {len} exceeds the {} bytes left in the frame of type 0x{:02X}",
            self.remaining(),
            self.frame_type
        ))
    }

    #[cold]
    #[inline(never)]
    fn truncated(&self, n: usize) -> FrameError {
        FrameError::connection(format!(
            "truncated frame of type 0x{:02X}: {} bytes left where {n} are needed",
            self.frame_type,
            self.remaining()
        ))
    }

    /// The next `n` bytes' range, skipped.
    #[inline(always)]
    fn skip(&mut self, n: usize) -> Result<std::ops::Range<usize>, FrameError> {
        self.need(n)?;
        let range = self.at..self.at + n;
        self.at += n;
        Ok(range)
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], FrameError> {
        let range = self.skip(N)?;
        Ok(self.b[range].try_into().expect("N bytes"))
    }

    #[inline(always)]
    fn u16(&mut self) -> Result<u16, FrameError> {
        self.array().map(u16::from_be_bytes)
    }

    #[inline(always)]
    fn u32(&mut self) -> Result<u32, FrameError> {
        self.array().map(u32::from_be_bytes)
    }

    #[inline(always)]
    fn u31(&mut self) -> Result<u32, FrameError> {
        Ok(self.u32()? & MAX_U31)
    }

    #[inline(always)]
    fn u64(&mut self) -> Result<u64, FrameError> {
        self.array().map(u64::from_be_bytes)
    }

    /// A SETUP's MIME type: a length byte, then that many bytes of UTF-8 (copied: a
    /// `String`). A short one is `INVALID_SETUP` too.
    fn mime(&mut self) -> Result<String, FrameError> {
        let setup_err = |e: FrameError| FrameError::setup(e.message);
        let [len] = self.array().map_err(setup_err)?;
        let raw = self.skip(len as usize).map_err(setup_err)?;
        match std::str::from_utf8(&self.b[raw]) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(FrameError::setup(format!(
                "SETUP with a MIME type that is not UTF-8 ({e})"
            ))),
        }
    }

    /// A payload's tail from here: its metadata length (24 bits, when M is set) checked
    /// against what is left; the data is the rest.
    #[inline(always)]
    fn payload(&mut self, has_metadata: bool) -> Result<Tail, FrameError> {
        let metadata = if has_metadata {
            let [a, b, c] = self.array()?;
            let len = ((a as usize) << 16) | ((b as usize) << 8) | c as usize;
            if len > self.remaining() {
                return Err(self.metadata_too_long(len));
            }
            Some(len)
        } else {
            None
        };
        Ok(Tail {
            at: self.at,
            metadata,
        })
    }
}
