//! Writing frames, each with its 24-bit TCP length prefix, into the connection's write
//! buffer; payload-bearing frames larger than the MTU are fragmented here.
//!
//! **Fragmentation** (spec, "Fragmentation and Reassembly"): a request or PAYLOAD whose frame
//! would exceed `mtu` bytes (header included, length prefix excluded) goes out as its first
//! frame with the F flag, then PAYLOAD frames with F on every one but the last; metadata is
//! sent completely before data; the last fragment carries the C flag of the original, and
//! every PAYLOAD fragment of a `next` carries N (the reassembler takes the last fragment's
//! flags, as rsocket-java and rsocket-py do). The whole sequence is written at once, so the
//! fragments of one payload are contiguous on the wire.

use bytes::{BufMut, BytesMut};

use super::{flag, ty, Frame, Setup, HEADER_LEN, MAX_FRAME_LEN, MAX_U31, METADATA_LEN_LEN};
use crate::rsocket::payload::Payload;

/// The smallest MTU accepted (as rsocket-java): a fragment must hold its header, the fixed
/// fields of a request and a few bytes of payload.
pub(crate) const MIN_MTU: usize = 64;

/// Reserves the length prefix; returns where the frame starts.
#[inline]
fn begin(buf: &mut BytesMut) -> usize {
    let at = buf.len();
    buf.put_slice(&[0, 0, 0]);
    at
}

/// Writes the length of the frame begun at `at` into its prefix.
#[inline]
fn finish(buf: &mut BytesMut, at: usize) {
    let len = buf.len() - at - 3;
    debug_assert!(len <= MAX_FRAME_LEN);
    buf[at] = (len >> 16) as u8;
    buf[at + 1] = (len >> 8) as u8;
    buf[at + 2] = len as u8;
}

#[inline]
fn header(buf: &mut BytesMut, id: u32, frame_type: u8, flags: u16) {
    buf.put_u32(id & MAX_U31);
    buf.put_u16(((frame_type as u16) << 10) | (flags & 0x3FF));
}

#[inline]
fn put_u24(buf: &mut BytesMut, v: usize) {
    buf.put_u8((v >> 16) as u8);
    buf.put_u16(v as u16);
}

/// Writes `frame` (fragmented at `mtu` where it carries a payload) into `buf`.
pub(crate) fn encode(frame: &Frame, mtu: usize, buf: &mut BytesMut) {
    match frame {
        Frame::Setup(setup) => encode_setup(setup, buf),
        Frame::Lease {
            ttl_ms,
            requests,
            metadata,
        } => {
            let at = begin(buf);
            let flags = if metadata.is_some() {
                flag::METADATA
            } else {
                0
            };
            header(buf, 0, ty::LEASE, flags);
            buf.put_u32(ttl_ms & MAX_U31);
            buf.put_u32(requests & MAX_U31);
            if let Some(m) = metadata {
                buf.put_slice(m);
            }
            finish(buf, at);
        }
        Frame::Keepalive {
            respond,
            position,
            data,
        } => {
            let at = begin(buf);
            header(
                buf,
                0,
                ty::KEEPALIVE,
                if *respond { flag::RESPOND } else { 0 },
            );
            buf.put_u64(position & (u64::MAX >> 1));
            buf.put_slice(data);
            finish(buf, at);
        }
        Frame::RequestResponse { id, payload, .. } => {
            fragmented(buf, mtu, *id, ty::REQUEST_RESPONSE, 0, None, payload, 0)
        }
        Frame::RequestFnf { id, payload, .. } => {
            fragmented(buf, mtu, *id, ty::REQUEST_FNF, 0, None, payload, 0)
        }
        Frame::RequestStream { id, n, payload, .. } => {
            fragmented(buf, mtu, *id, ty::REQUEST_STREAM, 0, Some(*n), payload, 0)
        }
        Frame::RequestChannel {
            id,
            complete,
            n,
            payload,
            ..
        } => {
            let c = if *complete { flag::COMPLETE } else { 0 };
            fragmented(buf, mtu, *id, ty::REQUEST_CHANNEL, c, Some(*n), payload, c)
        }
        Frame::RequestN { id, n } => {
            let at = begin(buf);
            header(buf, *id, ty::REQUEST_N, 0);
            buf.put_u32(n & MAX_U31);
            finish(buf, at);
        }
        Frame::Cancel { id } => {
            let at = begin(buf);
            header(buf, *id, ty::CANCEL, 0);
            finish(buf, at);
        }
        Frame::Payload {
            id,
            complete,
            next,
            payload,
            ..
        } => {
            let mut f = if *complete { flag::COMPLETE } else { 0 };
            if *next {
                f |= flag::NEXT;
            }
            fragmented(buf, mtu, *id, ty::PAYLOAD, f, None, payload, f)
        }
        Frame::Error { id, code, data } => {
            let at = begin(buf);
            header(buf, *id, ty::ERROR, 0);
            buf.put_u32(code.code());
            buf.put_slice(data);
            finish(buf, at);
        }
        Frame::MetadataPush { metadata } => {
            let at = begin(buf);
            header(buf, 0, ty::METADATA_PUSH, flag::METADATA);
            buf.put_slice(metadata);
            finish(buf, at);
        }
        // Never sent: resumption is not supported, and unknown frames are only received.
        Frame::Resume { .. } | Frame::Unknown { .. } => {}
    }
}

fn encode_setup(s: &Setup, buf: &mut BytesMut) {
    let at = begin(buf);
    let mut flags = if s.payload.metadata.is_some() {
        flag::METADATA
    } else {
        0
    };
    if s.lease {
        flags |= flag::LEASE;
    }
    if s.resume_token.is_some() {
        flags |= flag::RESUME_ENABLE;
    }
    header(buf, 0, ty::SETUP, flags);
    buf.put_u16(s.version.0);
    buf.put_u16(s.version.1);
    buf.put_u32(s.keepalive_ms & MAX_U31);
    buf.put_u32(s.lifetime_ms & MAX_U31);
    if let Some(token) = &s.resume_token {
        buf.put_u16(token.len() as u16);
        buf.put_slice(token);
    }
    for mime in [&s.metadata_mime, &s.data_mime] {
        // MIME types longer than 255 bytes are refused by the config's validation.
        buf.put_u8(mime.len() as u8);
        buf.put_slice(mime.as_bytes());
    }
    if let Some(m) = &s.payload.metadata {
        put_u24(buf, m.len());
        buf.put_slice(m);
    }
    buf.put_slice(&s.payload.data);
    finish(buf, at);
}

/// A payload-bearing frame of type `first_type` (flags `first_flags` besides M and F, the
/// initial request n when `n` is given), fragmented at `mtu`; follow-up fragments are PAYLOAD
/// frames with N, whose last one also carries the C of `last_flags`.
#[allow(clippy::too_many_arguments)]
fn fragmented(
    buf: &mut BytesMut,
    mtu: usize,
    id: u32,
    first_type: u8,
    first_flags: u16,
    n: Option<u32>,
    payload: &Payload,
    last_flags: u16,
) {
    let mtu = mtu.clamp(MIN_MTU, MAX_FRAME_LEN);
    let mut metadata: &[u8] = payload.metadata.as_deref().unwrap_or(&[]);
    let has_metadata = payload.metadata.is_some();
    let mut data: &[u8] = &payload.data;
    let fixed = if n.is_some() { 4 } else { 0 };
    let whole = HEADER_LEN
        + fixed
        + if has_metadata { METADATA_LEN_LEN } else { 0 }
        + metadata.len()
        + data.len();
    if whole <= mtu {
        // One frame: its fixed part assembled on the stack, then three copies into `buf`.
        let mut head = [0u8; 3 + HEADER_LEN + 4 + METADATA_LEN_LEN];
        let m = if has_metadata { flag::METADATA } else { 0 };
        let flags = ((first_type as u16) << 10) | ((first_flags | m) & 0x3FF);
        head[..3].copy_from_slice(&(whole as u32).to_be_bytes()[1..]);
        head[3..7].copy_from_slice(&(id & MAX_U31).to_be_bytes());
        head[7..9].copy_from_slice(&flags.to_be_bytes());
        let mut k = 3 + HEADER_LEN;
        if let Some(n) = n {
            head[k..k + 4].copy_from_slice(&(n & MAX_U31).to_be_bytes());
            k += 4;
        }
        if has_metadata {
            head[k..k + 3].copy_from_slice(&(metadata.len() as u32).to_be_bytes()[1..]);
            k += 3;
        }
        buf.reserve(3 + whole);
        buf.extend_from_slice(&head[..k]);
        buf.extend_from_slice(metadata);
        buf.extend_from_slice(data);
        return;
    }
    buf.reserve(whole + 3 * (1 + whole / (mtu - HEADER_LEN - METADATA_LEN_LEN)));
    // Follow-up fragments are PAYLOAD frames with N (a PAYLOAD needs N or C; rsocket-java
    // sends request fragments so too); the last one adds the original's C.
    let next_flag = flag::NEXT;
    let mut first = true;
    // The M flag goes on every fragment that carries metadata; the first fragment always
    // carries it when the payload has metadata (an empty metadata is sent as such).
    let mut metadata_pending = has_metadata;
    loop {
        let at = begin(buf);
        let (frame_type, base_flags, fixed) = if first {
            (first_type, first_flags & !flag::COMPLETE, fixed)
        } else {
            (ty::PAYLOAD, next_flag, 0)
        };
        let mut room = mtu - HEADER_LEN - fixed;
        let m_len = if metadata_pending {
            room -= METADATA_LEN_LEN;
            metadata.len().min(room)
        } else {
            0
        };
        let d_len = data.len().min(room - m_len);
        let last = m_len == metadata.len() && d_len == data.len();
        let mut flags = base_flags;
        if metadata_pending {
            flags |= flag::METADATA;
        }
        if last {
            flags |= if first {
                first_flags
            } else {
                last_flags & flag::COMPLETE
            };
        } else {
            flags |= flag::FOLLOWS;
        }
        header(buf, id, frame_type, flags);
        if first {
            if let Some(n) = n {
                buf.put_u32(n & MAX_U31);
            }
        }
        if metadata_pending {
            put_u24(buf, m_len);
            buf.put_slice(&metadata[..m_len]);
            metadata = &metadata[m_len..];
            metadata_pending = !metadata.is_empty();
        }
        buf.put_slice(&data[..d_len]);
        data = &data[d_len..];
        finish(buf, at);
        first = false;
        if last {
            return;
        }
    }
}
