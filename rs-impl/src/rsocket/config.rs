//! Configuration of connections, clients and servers. Every bound of the module is a field
//! here, with its default.

use std::time::Duration;

use super::frame::{encode::MIN_MTU, MAX_FRAME_LEN, MAX_U31};
use super::metadata::COMPOSITE_MIME;
use super::payload::Payload;

/// The limits of one connection, on either side. Together they bound everything a connection
/// buffers (the module documentation adds them up).
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::ConnectionConfig;
/// let mut c = ConnectionConfig::default();
/// c.mtu = 1024; // fragment payloads into frames of at most 1 KiB
/// assert!(c.validate().is_ok());
/// c.mtu = 10;
/// assert!(c.validate().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionConfig {
    /// The largest frame sent (header included, length prefix excluded): larger requests and
    /// payloads are fragmented. At least 64, at most 16,777,215 (the spec's maximum, the
    /// default: only what cannot fit a frame is fragmented).
    pub mtu: usize,
    /// The largest frame accepted from the peer; a longer length prefix is a
    /// `CONNECTION_ERROR`. Default and maximum 16,777,215.
    pub max_frame: usize,
    /// The largest payload (data and metadata) reassembled from fragments; a larger one is a
    /// `CONNECTION_ERROR`. Default 64 MiB.
    pub max_payload: usize,
    /// Elements requested from a local publisher (a responder's stream, a requester's
    /// channel input) and not yet written to the socket: the per-stream outbound window.
    /// A stream asks its publisher for more only as the writer drains it, so a peer that
    /// reads slowly slows the publisher to its pace. Default 64.
    pub stream_window: usize,
    /// Elements of one inbound stream that may wait while its subscriber is busy on another
    /// thread; when it is full the connection stops reading the socket until it drains.
    /// Default 64.
    pub inbound_buffer: usize,
    /// Streams open at once on this connection, in each direction. A request beyond it is
    /// refused: locally with [`RSocketError::TooManyStreams`](super::RSocketError), from the
    /// peer with `ERROR[REJECTED]`. Default 1024.
    pub max_streams: usize,
    /// Frames the connection itself queues for the writer (KEEPALIVE answers, errors,
    /// grants): when that many wait, the reader stops reading the socket until the writer
    /// catches up. Default 64.
    pub control_queue: usize,
    /// Bytes the writer encodes before it waits for the socket to take them
    /// (`FramedWrite`'s backpressure boundary). Default 64 KiB.
    pub write_buffer: usize,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            mtu: MAX_FRAME_LEN,
            max_frame: MAX_FRAME_LEN,
            max_payload: 64 << 20,
            stream_window: 64,
            inbound_buffer: 64,
            max_streams: 1024,
            control_queue: 64,
            write_buffer: 64 << 10,
        }
    }
}

/// A configuration value out of its range: which field, and why.
///
/// # Examples
///
/// ```
/// let mut c = rs_impl::rsocket::ServerConfig::default();
/// c.lanes = 0;
/// let e = c.validate().unwrap_err();
/// assert_eq!(e.field(), "lanes");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid RSocket configuration: {message}")]
pub struct ConfigError {
    field: &'static str,
    message: String,
}

impl ConfigError {
    /// The field out of range, as it is named in its struct (`"lanes"`, `"mtu"`,
    /// `"lease.ttl"`, ...).
    ///
    /// # Examples
    ///
    /// See [`ConfigError`].
    pub fn field(&self) -> &'static str {
        self.field
    }
}

fn check(ok: bool, field: &'static str, what: impl FnOnce() -> String) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError {
            field,
            message: what(),
        })
    }
}

impl ConnectionConfig {
    /// Checks every field's range.
    ///
    /// # Errors
    ///
    /// The first field out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check((MIN_MTU..=MAX_FRAME_LEN).contains(&self.mtu), "mtu", || {
            format!("mtu {} is outside {MIN_MTU}..={MAX_FRAME_LEN}", self.mtu)
        })?;
        check(
            (MIN_MTU..=MAX_FRAME_LEN).contains(&self.max_frame),
            "max_frame",
            || {
                format!(
                    "max_frame {} is outside {MIN_MTU}..={MAX_FRAME_LEN}",
                    self.max_frame
                )
            },
        )?;
        check(self.max_payload > 0, "max_payload", || {
            "max_payload is 0".into()
        })?;
        check(self.stream_window > 0, "stream_window", || {
            "stream_window is 0".into()
        })?;
        check(self.inbound_buffer > 0, "inbound_buffer", || {
            "inbound_buffer is 0".into()
        })?;
        check(self.max_streams > 0, "max_streams", || {
            "max_streams is 0".into()
        })?;
        check(self.control_queue > 0, "control_queue", || {
            "control_queue is 0".into()
        })?;
        check(self.write_buffer > 0, "write_buffer", || {
            "write_buffer is 0".into()
        })
    }
}

fn millis(d: Duration, what: &'static str) -> Result<u32, ConfigError> {
    let ms = d.as_millis();
    check(ms > 0 && ms <= MAX_U31 as u128, what, || {
        format!("{what} of {d:?} is outside 1 ms ..= 2^31-1 ms")
    })?;
    Ok(ms as u32)
}

/// A client's configuration: what its SETUP frame says, and its connection's limits.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use rs_impl::rsocket::ClientConfig;
/// let mut c = ClientConfig::default();
/// c.keepalive_interval = Duration::from_millis(500);
/// c.max_lifetime = Duration::from_secs(3);
/// assert!(c.validate().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Time between the client's KEEPALIVE frames. Default 20 s (as rsocket-java).
    pub keepalive_interval: Duration,
    /// How long the server may stay silent before the client closes the connection (the
    /// SETUP's max lifetime; the server applies the same bound to the client). Default 90 s.
    pub max_lifetime: Duration,
    /// The metadata MIME type. Default `message/x.rsocket.composite-metadata.v0`, which the
    /// routing of [`Route`](super::Route) needs.
    pub metadata_mime: String,
    /// The data MIME type. Default `application/octet-stream`.
    pub data_mime: String,
    /// The SETUP frame's payload. Default empty.
    pub setup_payload: Payload,
    /// Set the SETUP's L flag: this client honours LEASE and sends no request before the
    /// server's first LEASE (`connect` waits for it). Default `false`; a LEASE that arrives
    /// without it is honoured all the same.
    pub lease: bool,
    /// The connection's limits.
    pub connection: ConnectionConfig,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            keepalive_interval: Duration::from_secs(20),
            max_lifetime: Duration::from_secs(90),
            metadata_mime: COMPOSITE_MIME.to_owned(),
            data_mime: "application/octet-stream".to_owned(),
            setup_payload: Payload::default(),
            lease: false,
            connection: ConnectionConfig::default(),
        }
    }
}

impl ClientConfig {
    /// Checks every field's range.
    ///
    /// # Errors
    ///
    /// The first field out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.keepalive_ms()?;
        self.lifetime_ms()?;
        for (what, mime) in [
            ("metadata_mime", &self.metadata_mime),
            ("data_mime", &self.data_mime),
        ] {
            check(mime.len() <= 255, what, || {
                format!("{what} is longer than 255 bytes")
            })?;
        }
        self.connection.validate()
    }

    pub(crate) fn keepalive_ms(&self) -> Result<u32, ConfigError> {
        millis(self.keepalive_interval, "keepalive_interval")
    }

    pub(crate) fn lifetime_ms(&self) -> Result<u32, ConfigError> {
        millis(self.max_lifetime, "max_lifetime")
    }
}

/// The LEASE a server grants to a client that asked for leases (the SETUP's L flag): the
/// server sends it after accepting the SETUP and renews it every half `ttl`; a request
/// beyond it is answered with `ERROR[REJECTED]`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// let grant = rs_impl::rsocket::LeaseGrant { ttl: Duration::from_secs(10), requests: 100 };
/// assert_eq!(grant.requests, 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseGrant {
    /// How long each LEASE is valid. Default 30 s.
    pub ttl: Duration,
    /// How many requests each LEASE allows. Default 2^31 − 1.
    pub requests: u32,
}

impl Default for LeaseGrant {
    fn default() -> Self {
        LeaseGrant {
            ttl: Duration::from_secs(30),
            requests: MAX_U31,
        }
    }
}

/// A server's configuration.
///
/// # Examples
///
/// ```
/// let mut c = rs_impl::rsocket::ServerConfig::default();
/// c.connection.stream_window = 16;
/// assert_eq!(c.lanes, 1);
/// assert!(c.validate().is_ok());
/// c.lanes = 4; // four inbound lanes per connection, keyed by route
/// assert!(c.validate().is_ok());
/// c.lanes = 0;
/// assert_eq!(c.validate().unwrap_err().field(), "lanes");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Each connection's limits.
    pub connection: ConnectionConfig,
    /// The LEASE granted to clients that ask for leases.
    pub lease: LeaseGrant,
    /// The server's bound on a client's silence when the client's SETUP asks for more:
    /// the connection closes after `min(SETUP max lifetime, max_lifetime)` without a frame.
    /// Default 90 s.
    pub max_lifetime: Duration,
    /// Inbound lanes per connection: the peer's request frames, and the frames that follow
    /// on their streams, are handled on `lanes` lanes keyed by a stable hash of the request's
    /// route (the module documentation, "Inbound lanes"). Default 1: every frame is handled
    /// on the connection's reader task, and no lane is built. At least 1.
    pub lanes: usize,
    /// With `lanes > 1`, the frames each lane's queue holds (rounded up to a power of two,
    /// at least 2). When a lane's queue is full, the connection stops reading the socket at
    /// the next frame for a lane. Default [`DEFAULT_INBOUND_LANE_CAPACITY`]. At least 1.
    pub lane_capacity: usize,
}

/// [`ServerConfig::lane_capacity`]'s default, in frames.
pub const DEFAULT_INBOUND_LANE_CAPACITY: usize = 256;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            connection: ConnectionConfig::default(),
            lease: LeaseGrant::default(),
            max_lifetime: Duration::from_secs(90),
            lanes: 1,
            lane_capacity: DEFAULT_INBOUND_LANE_CAPACITY,
        }
    }
}

impl ServerConfig {
    /// Checks every field's range.
    ///
    /// # Errors
    ///
    /// The first field out of range ([`ConfigError::field`] names it).
    pub fn validate(&self) -> Result<(), ConfigError> {
        millis(self.lease.ttl, "lease.ttl")?;
        check(
            self.lease.requests > 0 && self.lease.requests <= MAX_U31,
            "lease.requests",
            || "lease.requests is outside 1..=2^31-1".into(),
        )?;
        millis(self.max_lifetime, "max_lifetime")?;
        check(self.lanes > 0, "lanes", || {
            "lanes is 0: a connection needs at least one inbound lane".into()
        })?;
        check(self.lane_capacity > 0, "lane_capacity", || {
            "lane_capacity is 0: a lane must hold at least one frame".into()
        })?;
        self.connection.validate()
    }
}
