//! The unit of data on an RSocket stream: data and optional metadata, both [`Bytes`].

use bytes::Bytes;

/// One RSocket payload: the data and, optionally, the metadata of a request or of one element
/// of a stream (a PAYLOAD frame's `onNext`).
///
/// Both parts are [`Bytes`]: cloning a payload shares its buffers, and a payload received from
/// the network is a view into the connection's read buffer (no copy). `metadata: None` and
/// `Some(empty)` differ on the wire (the M flag), as the spec distinguishes them.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::Payload;
///
/// let p = Payload::from("hello");
/// assert_eq!(&p.data[..], b"hello");
/// assert!(p.metadata.is_none());
///
/// let q = Payload::new("data", Some("meta".into()));
/// assert_eq!(q.metadata.as_deref(), Some(&b"meta"[..]));
/// assert_eq!(q.len(), 8);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Payload {
    /// The payload's data.
    pub data: Bytes,
    /// The payload's metadata, when present.
    pub metadata: Option<Bytes>,
}

impl Payload {
    /// A payload of `data` and `metadata`.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = rs_impl::rsocket::Payload::new(vec![1u8, 2], None);
    /// assert_eq!(p.data.len(), 2);
    /// ```
    pub fn new(data: impl Into<Bytes>, metadata: Option<Bytes>) -> Self {
        Payload {
            data: data.into(),
            metadata,
        }
    }

    /// The number of bytes of data and metadata together.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::rsocket::Payload::from("abc").len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.data.len() + self.metadata.as_ref().map_or(0, Bytes::len)
    }

    /// Whether the payload has no data and no metadata bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::rsocket::Payload::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The data as UTF-8 text, if it is.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::rsocket::Payload::from("hi").data_utf8(), Some("hi"));
    /// ```
    pub fn data_utf8(&self) -> Option<&str> {
        std::str::from_utf8(&self.data).ok()
    }
}

impl From<Bytes> for Payload {
    fn from(data: Bytes) -> Self {
        Payload {
            data,
            metadata: None,
        }
    }
}

impl From<&'static str> for Payload {
    fn from(data: &'static str) -> Self {
        Payload::from(Bytes::from_static(data.as_bytes()))
    }
}

impl From<&'static [u8]> for Payload {
    fn from(data: &'static [u8]) -> Self {
        Payload::from(Bytes::from_static(data))
    }
}

impl From<String> for Payload {
    fn from(data: String) -> Self {
        Payload::from(Bytes::from(data))
    }
}

impl From<Vec<u8>> for Payload {
    fn from(data: Vec<u8>) -> Self {
        Payload::from(Bytes::from(data))
    }
}
