//! The errors of the RSocket module: the spec's error codes ([`ErrorCode`]) and what a caller
//! or a subscriber sees ([`RSocketError`]).

use std::fmt;
use std::sync::Arc;

/// An ERROR frame's error code (RSocket 1.0, "Error Codes"), every one the spec defines.
///
/// Codes `0x0301..=0xFFFF_FFFE` are the application's; they arrive as
/// [`ErrorCode::Application`]`(code)` and go out unchanged.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::ErrorCode;
///
/// assert_eq!(ErrorCode::ApplicationError.code(), 0x201);
/// assert_eq!(ErrorCode::from_code(0x202), ErrorCode::Rejected);
/// assert_eq!(ErrorCode::from_code(0x1234), ErrorCode::Application(0x1234));
/// assert!(ErrorCode::ConnectionError.is_connection_level());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `INVALID_SETUP` (0x001): the SETUP frame is invalid for the server. Stream 0.
    InvalidSetup,
    /// `UNSUPPORTED_SETUP` (0x002): some SETUP parameters are unsupported. Stream 0.
    UnsupportedSetup,
    /// `REJECTED_SETUP` (0x003): the server rejected the SETUP. Stream 0.
    RejectedSetup,
    /// `REJECTED_RESUME` (0x004): the server rejected a RESUME. Stream 0.
    RejectedResume,
    /// `CONNECTION_ERROR` (0x101): the connection is being terminated. Stream 0.
    ConnectionError,
    /// `CONNECTION_CLOSE` (0x102): the connection is being closed gracefully. Stream 0.
    ConnectionClose,
    /// `APPLICATION_ERROR` (0x201): the application's `onError`. Stream > 0.
    ApplicationError,
    /// `REJECTED` (0x202): the responder rejected the request without processing it.
    Rejected,
    /// `CANCELED` (0x203): the responder cancelled the request, possibly after starting it.
    Canceled,
    /// `INVALID` (0x204): the request is invalid.
    Invalid,
    /// A code the spec reserves (`0x000`, unused values up to `0x300`, `0xFFFF_FFFF`), or an
    /// application-defined code (`0x301..=0xFFFF_FFFE`).
    Application(u32),
}

impl ErrorCode {
    /// The code's value on the wire.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::rsocket::ErrorCode::InvalidSetup.code(), 1);
    /// ```
    pub const fn code(self) -> u32 {
        match self {
            ErrorCode::InvalidSetup => 0x001,
            ErrorCode::UnsupportedSetup => 0x002,
            ErrorCode::RejectedSetup => 0x003,
            ErrorCode::RejectedResume => 0x004,
            ErrorCode::ConnectionError => 0x101,
            ErrorCode::ConnectionClose => 0x102,
            ErrorCode::ApplicationError => 0x201,
            ErrorCode::Rejected => 0x202,
            ErrorCode::Canceled => 0x203,
            ErrorCode::Invalid => 0x204,
            ErrorCode::Application(c) => c,
        }
    }

    /// The code for a wire value.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::rsocket::ErrorCode::from_code(0x203), rs_impl::rsocket::ErrorCode::Canceled);
    /// ```
    pub const fn from_code(code: u32) -> Self {
        match code {
            0x001 => ErrorCode::InvalidSetup,
            0x002 => ErrorCode::UnsupportedSetup,
            0x003 => ErrorCode::RejectedSetup,
            0x004 => ErrorCode::RejectedResume,
            0x101 => ErrorCode::ConnectionError,
            0x102 => ErrorCode::ConnectionClose,
            0x201 => ErrorCode::ApplicationError,
            0x202 => ErrorCode::Rejected,
            0x203 => ErrorCode::Canceled,
            0x204 => ErrorCode::Invalid,
            c => ErrorCode::Application(c),
        }
    }

    /// Whether the code belongs on stream 0 (the connection and its setup).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!rs_impl::rsocket::ErrorCode::Rejected.is_connection_level());
    /// ```
    pub const fn is_connection_level(self) -> bool {
        matches!(
            self,
            ErrorCode::InvalidSetup
                | ErrorCode::UnsupportedSetup
                | ErrorCode::RejectedSetup
                | ErrorCode::RejectedResume
                | ErrorCode::ConnectionError
                | ErrorCode::ConnectionClose
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ErrorCode::InvalidSetup => "INVALID_SETUP",
            ErrorCode::UnsupportedSetup => "UNSUPPORTED_SETUP",
            ErrorCode::RejectedSetup => "REJECTED_SETUP",
            ErrorCode::RejectedResume => "REJECTED_RESUME",
            ErrorCode::ConnectionError => "CONNECTION_ERROR",
            ErrorCode::ConnectionClose => "CONNECTION_CLOSE",
            ErrorCode::ApplicationError => "APPLICATION_ERROR",
            ErrorCode::Rejected => "REJECTED",
            ErrorCode::Canceled => "CANCELED",
            ErrorCode::Invalid => "INVALID",
            ErrorCode::Application(c) => return write!(f, "ERROR 0x{c:08X}"),
        };
        f.write_str(name)
    }
}

/// What went wrong, as a requester's subscriber or future sees it, and what a responder's
/// handler returns to choose the ERROR frame's code.
///
/// It travels inside an [`rs_api::Error`] through `on_error`
/// (`error.downcast_ref::<RSocketError>()` recovers it). A handler's error that is not an
/// `RSocketError` goes out as `APPLICATION_ERROR` with its `Display` text.
///
/// # Examples
///
/// ```
/// use rs_impl::rsocket::{ErrorCode, RSocketError};
///
/// let e = RSocketError::application("no such user");
/// assert_eq!(e.code(), Some(ErrorCode::ApplicationError));
/// assert_eq!(e.to_string(), "APPLICATION_ERROR: no such user");
/// let rejected = RSocketError::remote(ErrorCode::Rejected, "busy");
/// assert_eq!(rejected.code(), Some(ErrorCode::Rejected));
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RSocketError {
    /// An ERROR frame: received from the peer on a stream or on the connection, or (from a
    /// handler) to be sent with this code.
    #[error("{code}: {message}")]
    Remote {
        /// The frame's error code.
        code: ErrorCode,
        /// The frame's error data, as text.
        message: String,
    },
    /// The connection is closed (by either side, or by a transport failure); every stream on
    /// it ends with this error.
    #[error("the RSocket connection is closed: {0}")]
    Closed(String),
    /// The transport failed.
    #[error("RSocket transport error: {0}")]
    Io(#[source] Arc<std::io::Error>),
    /// The peer broke the protocol on this stream (for example more PAYLOADs than requested).
    #[error("RSocket protocol violation by the peer: {0}")]
    Protocol(String),
    /// A request could not be sent: the peer's LEASE has expired or is used up (the request
    /// was not sent).
    #[error("no LEASE allows another request: {0}")]
    NoLease(String),
    /// A request could not be sent: this connection already has the configured maximum of
    /// concurrent streams (the request was not sent).
    #[error("too many concurrent streams on this connection (the limit is {0})")]
    TooManyStreams(usize),
    /// A configuration out of range: [`Server::bind`](super::Server::bind) and
    /// [`Client::connect`](super::Client::connect) refuse it before touching the network.
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
    /// A payload exceeds a configured limit (the request was not sent / the stream failed).
    #[error("a payload of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The payload's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
}

impl RSocketError {
    /// An error frame with `code` and `message`.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::rsocket::{ErrorCode, RSocketError};
    /// assert_eq!(RSocketError::remote(ErrorCode::Invalid, "x").to_string(), "INVALID: x");
    /// ```
    pub fn remote(code: ErrorCode, message: impl Into<String>) -> Self {
        RSocketError::Remote {
            code,
            message: message.into(),
        }
    }

    /// An `APPLICATION_ERROR` with `message`.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = rs_impl::rsocket::RSocketError::application("boom");
    /// assert_eq!(e.message(), "boom");
    /// ```
    pub fn application(message: impl Into<String>) -> Self {
        Self::remote(ErrorCode::ApplicationError, message)
    }

    /// The ERROR frame's code, for [`RSocketError::Remote`].
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::rsocket::RSocketError::Closed("x".into()).code(), None);
    /// ```
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            RSocketError::Remote { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The error's text without its code (the ERROR frame's data for `Remote`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::rsocket::RSocketError::application("m").message(), "m");
    /// ```
    pub fn message(&self) -> String {
        match self {
            RSocketError::Remote { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// The code and text an `rs_api::Error` goes out with on a stream: an `RSocketError::Remote`
    /// keeps its code (a connection-level code becomes `APPLICATION_ERROR`), anything else is
    /// `APPLICATION_ERROR` with its `Display`.
    pub(crate) fn frame_of(error: &rs_api::Error) -> (ErrorCode, String) {
        match error.downcast_ref::<RSocketError>() {
            Some(RSocketError::Remote { code, message }) if !code.is_connection_level() => {
                (*code, message.clone())
            }
            _ => (ErrorCode::ApplicationError, error.to_string()),
        }
    }
}

impl From<std::io::Error> for RSocketError {
    fn from(e: std::io::Error) -> Self {
        RSocketError::Io(Arc::new(e))
    }
}

impl From<RSocketError> for rs_api::Error {
    fn from(e: RSocketError) -> Self {
        rs_api::Error::new(e)
    }
}
