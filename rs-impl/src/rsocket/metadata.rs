//! Metadata extensions: composite metadata (`message/x.rsocket.composite-metadata.v0`) and
//! routing (`message/x.rsocket.routing.v0`) inside it, as Spring Messaging and rsocket-java
//! route requests.
//!
//! A composite metadata is a sequence of entries, each a MIME type (a well-known id in one
//! byte with the top bit set, or a length byte and the MIME string), a 24-bit length and the
//! entry's bytes. A routing entry is a sequence of tags, each a length byte and UTF-8 text;
//! the first tag is the route.
//!
//! **Explicit MIME strings:** the extension's text says the byte holds the string's length;
//! rsocket-java and rsocket-py write and read *length − 1* (a MIME type cannot be empty). This
//! module follows the implementations, which is what interoperates. Routing uses the
//! well-known id `0x7E`, which avoids the question when this side writes.
//!
//! # Examples
//!
//! ```
//! use rs_impl::rsocket::{metadata, Route};
//!
//! let route = Route::new("prices.btc");
//! assert_eq!(metadata::route(route.metadata()).unwrap(), Some("prices.btc"));
//!
//! let mut entries = metadata::CompositeMetadata::new();
//! entries.push_route("orders").push("text/plain", b"trace-id 42");
//! let bytes = entries.build();
//! let kinds: Vec<String> = metadata::entries(&bytes)
//!     .map(|e| e.unwrap().0.to_string())
//!     .collect();
//! assert_eq!(kinds, ["message/x.rsocket.routing.v0", "text/plain"]);
//! ```

use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};

/// The MIME type of composite metadata, the default metadata MIME type of a client's SETUP.
pub const COMPOSITE_MIME: &str = "message/x.rsocket.composite-metadata.v0";
/// The MIME type of routing metadata.
pub const ROUTING_MIME: &str = "message/x.rsocket.routing.v0";
/// The well-known id of [`ROUTING_MIME`].
const ROUTING_ID: u8 = 0x7E;
/// The well-known id of [`COMPOSITE_MIME`].
const COMPOSITE_ID: u8 = 0x7F;

/// Well-known MIME types this module names (the others show as their id).
fn well_known(id: u8) -> Option<&'static str> {
    Some(match id {
        0x00 => "application/avro",
        0x01 => "application/cbor",
        0x02 => "application/graphql",
        0x03 => "application/gzip",
        0x04 => "application/javascript",
        0x05 => "application/json",
        0x06 => "application/octet-stream",
        0x07 => "application/pdf",
        0x08 => "application/vnd.apache.thrift.binary",
        0x09 => "application/vnd.google.protobuf",
        0x0A => "application/xml",
        0x0B => "application/zip",
        0x1B => "text/css",
        0x1C => "text/csv",
        0x1D => "text/html",
        0x1E => "text/plain",
        0x1F => "text/xml",
        0x7A => "message/x.rsocket.mime-type.v0",
        0x7B => "message/x.rsocket.accept-mime-types.v0",
        0x7C => "message/x.rsocket.authentication.v0",
        0x7D => "message/x.rsocket.tracing-zipkin.v0",
        ROUTING_ID => ROUTING_MIME,
        COMPOSITE_ID => COMPOSITE_MIME,
        _ => return None,
    })
}

/// The MIME type of one composite-metadata entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MimeType<'a> {
    /// A well-known id (`0..=127`).
    WellKnown(u8),
    /// An explicit MIME string.
    Explicit(&'a str),
}

impl MimeType<'_> {
    /// Whether this is the routing MIME type (by id or by name).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::rsocket::metadata::MimeType;
    /// assert!(MimeType::WellKnown(0x7E).is_routing());
    /// assert!(MimeType::Explicit("message/x.rsocket.routing.v0").is_routing());
    /// ```
    pub fn is_routing(&self) -> bool {
        match self {
            MimeType::WellKnown(id) => *id == ROUTING_ID,
            MimeType::Explicit(s) => *s == ROUTING_MIME,
        }
    }
}

impl fmt::Display for MimeType<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MimeType::WellKnown(id) => match well_known(*id) {
                Some(name) => f.write_str(name),
                None => write!(f, "well-known MIME id 0x{id:02X}"),
            },
            MimeType::Explicit(s) => f.write_str(s),
        }
    }
}

/// Malformed metadata.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed {what}: {detail}")]
pub struct MetadataError {
    what: &'static str,
    detail: String,
}

fn malformed(what: &'static str, detail: impl Into<String>) -> MetadataError {
    MetadataError {
        what,
        detail: detail.into(),
    }
}

/// The entries of a composite metadata, in order: `(mime type, entry bytes)`. Stops after the
/// first malformed entry (which it yields as an error).
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::metadata;
/// let m = metadata::CompositeMetadata::new().push_route("a").build();
/// assert_eq!(metadata::entries(&m).count(), 1);
/// assert!(metadata::entries(&[0x05]).next().unwrap().is_err());
/// ```
pub fn entries(
    metadata: &[u8],
) -> impl Iterator<Item = Result<(MimeType<'_>, &[u8]), MetadataError>> {
    let mut rest = metadata;
    let mut failed = false;
    std::iter::from_fn(move || {
        if rest.is_empty() || failed {
            return None;
        }
        let entry = next_entry(&mut rest);
        failed = entry.is_err();
        Some(entry)
    })
}

fn next_entry<'a>(rest: &mut &'a [u8]) -> Result<(MimeType<'a>, &'a [u8]), MetadataError> {
    let b = rest[0];
    let mut at = 1;
    let mime = if b & 0x80 != 0 {
        MimeType::WellKnown(b & 0x7F)
    } else {
        // rsocket-java and rsocket-py: the byte is the length minus one.
        let len = b as usize + 1;
        let raw = rest
            .get(at..at + len)
            .ok_or_else(|| malformed("composite metadata", "a MIME type beyond the end"))?;
        at += len;
        MimeType::Explicit(
            std::str::from_utf8(raw)
                .map_err(|_| malformed("composite metadata", "a MIME type that is not UTF-8"))?,
        )
    };
    let len_bytes = rest
        .get(at..at + 3)
        .ok_or_else(|| malformed("composite metadata", "an entry length beyond the end"))?;
    let len =
        ((len_bytes[0] as usize) << 16) | ((len_bytes[1] as usize) << 8) | len_bytes[2] as usize;
    at += 3;
    let body = rest
        .get(at..at + len)
        .ok_or_else(|| malformed("composite metadata", "an entry beyond the end"))?;
    *rest = &rest[at + len..];
    Ok((mime, body))
}

/// The tags of a routing entry, in order.
///
/// # Examples
///
/// ```
/// let tags: Vec<_> = rs_impl::rsocket::metadata::tags(b"\x01a\x02bc").collect();
/// assert_eq!(tags, [Ok("a"), Ok("bc")]);
/// ```
pub fn tags(routing: &[u8]) -> impl Iterator<Item = Result<&str, MetadataError>> {
    let mut rest = routing;
    let mut failed = false;
    std::iter::from_fn(move || {
        if rest.is_empty() || failed {
            return None;
        }
        let len = rest[0] as usize;
        let tag = rest
            .get(1..1 + len)
            .ok_or_else(|| malformed("routing metadata", "a tag beyond the end"));
        let tag = tag.and_then(|raw| {
            std::str::from_utf8(raw)
                .map_err(|_| malformed("routing metadata", "a tag that is not UTF-8"))
        });
        match tag {
            Ok(t) => {
                rest = &rest[1 + len..];
                Some(Ok(t))
            }
            Err(e) => {
                failed = true;
                Some(Err(e))
            }
        }
    })
}

/// The route of a request: the first tag of the first routing entry of its composite metadata,
/// or `None` when there is no routing entry.
///
/// # Errors
///
/// The composite metadata, or the routing entry, is malformed.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::{metadata, Route};
/// assert_eq!(metadata::route(Route::new("a.b").metadata()), Ok(Some("a.b")));
/// assert_eq!(metadata::route(&[]), Ok(None));
/// ```
pub fn route(composite: &[u8]) -> Result<Option<&str>, MetadataError> {
    // The usual shape, as `Route` and Spring write it: one entry, the well-known routing
    // MIME id, one tag filling it. Read at once; any other shape goes through the entries.
    if let Some(tag) = route_tag(composite) {
        return std::str::from_utf8(tag)
            .map(Some)
            .map_err(|_| malformed("routing metadata", "a tag that is not UTF-8"));
    }
    for entry in entries(composite) {
        let (mime, body) = entry?;
        if mime.is_routing() {
            return tags(body).next().transpose();
        }
    }
    Ok(None)
}

/// The tag of the usual routing metadata, as [`Route`] and Spring write it (one entry, the
/// well-known routing MIME id, one tag filling it), unchecked: `None` for any other shape.
/// [`route`] reads every shape and checks the tag.
pub(crate) fn route_tag(composite: &[u8]) -> Option<&[u8]> {
    if let [id, l0, l1, l2, tag_len, tag @ ..] = composite {
        let len = ((*l0 as usize) << 16) | ((*l1 as usize) << 8) | *l2 as usize;
        if *id == 0x80 | ROUTING_ID && len == tag.len() + 1 && *tag_len as usize == tag.len() {
            return Some(tag);
        }
    }
    None
}

/// A composite-metadata builder.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::metadata::{self, CompositeMetadata};
/// let m = CompositeMetadata::new().push_route("r").push("application/json", b"{}").build();
/// assert_eq!(metadata::route(&m), Ok(Some("r")));
/// ```
#[derive(Clone, Debug, Default)]
pub struct CompositeMetadata {
    buf: BytesMut,
}

impl CompositeMetadata {
    /// An empty composite metadata.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a routing entry with one tag, `route`.
    ///
    /// # Panics
    ///
    /// If `route` is longer than 255 bytes (a routing tag's length is one byte).
    pub fn push_route(&mut self, route: &str) -> &mut Self {
        assert!(
            route.len() <= 255,
            "a routing tag is at most 255 bytes (got {})",
            route.len()
        );
        self.buf.put_u8(0x80 | ROUTING_ID);
        put_u24(&mut self.buf, route.len() + 1);
        self.buf.put_u8(route.len() as u8);
        self.buf.put_slice(route.as_bytes());
        self
    }

    /// Appends an entry of MIME type `mime` (written by its well-known id when it has one).
    ///
    /// # Panics
    ///
    /// If `mime` is empty or longer than 128 bytes, or `entry` longer than 16,777,215 bytes.
    pub fn push(&mut self, mime: &str, entry: &[u8]) -> &mut Self {
        match (0u8..=0x7F).find(|id| well_known(*id) == Some(mime)) {
            Some(id) => self.buf.put_u8(0x80 | id),
            None => {
                assert!(
                    (1..=128).contains(&mime.len()),
                    "an explicit MIME type has 1 to 128 bytes (got {})",
                    mime.len()
                );
                self.buf.put_u8((mime.len() - 1) as u8);
                self.buf.put_slice(mime.as_bytes());
            }
        }
        assert!(
            entry.len() <= 0xFF_FFFF,
            "a metadata entry is at most 16,777,215 bytes"
        );
        put_u24(&mut self.buf, entry.len());
        self.buf.put_slice(entry);
        self
    }

    /// The encoded metadata.
    pub fn build(&mut self) -> Bytes {
        std::mem::take(&mut self.buf).freeze()
    }
}

fn put_u24(buf: &mut BytesMut, v: usize) {
    buf.put_u8((v >> 16) as u8);
    buf.put_u16(v as u16);
}

/// A route, encoded once as composite metadata with one routing entry: reuse a `Route` for
/// many requests and the encoding is not repeated (cloning it shares the bytes). Every
/// request method of the client takes `impl Into<Route>`, so a `&str` works too.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::Route;
/// let r = Route::new("echo");
/// assert_eq!(r.name(), "echo");
/// let same: Route = "echo".into();
/// assert_eq!(r.metadata(), same.metadata());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    name: std::sync::Arc<str>,
    metadata: Bytes,
}

impl Route {
    /// Encodes `name` as a route.
    ///
    /// # Panics
    ///
    /// If `name` is longer than 255 bytes.
    pub fn new(name: &str) -> Self {
        Route {
            name: name.into(),
            metadata: CompositeMetadata::new().push_route(name).build(),
        }
    }

    /// The route's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The route as composite metadata.
    pub fn metadata(&self) -> &Bytes {
        &self.metadata
    }

    /// The request's metadata: the routing entry, then the payload's own metadata entries
    /// (which must be composite metadata themselves), if any.
    /// Takes the route: its bytes are moved out, not shared again, when the payload has no
    /// metadata of its own (the usual case).
    pub(crate) fn with(self, own: Option<Bytes>) -> Bytes {
        match own {
            None => self.metadata,
            Some(m) if m.is_empty() => self.metadata,
            Some(m) => {
                let mut buf = BytesMut::with_capacity(self.metadata.len() + m.len());
                buf.put_slice(&self.metadata);
                buf.put_slice(&m);
                buf.freeze()
            }
        }
    }
}

impl From<&str> for Route {
    fn from(name: &str) -> Self {
        Route::new(name)
    }
}

impl From<&Route> for Route {
    fn from(r: &Route) -> Self {
        r.clone()
    }
}

impl From<String> for Route {
    fn from(name: String) -> Self {
        Route::new(&name)
    }
}
