//! The error delivered by [`Subscriber::on_error`](crate::Subscriber::on_error) and the
//! typed spec violations this project reports.

use std::fmt;
use std::sync::Arc;

/// The error carried by [`Subscriber::on_error`](crate::Subscriber::on_error).
///
/// It is a cheap, cloneable handle (an `Arc`) over any `std::error::Error + Send + Sync +
/// 'static`, because one failure may be delivered to many subscribers (a fanout publisher, a
/// multicast processor: rule 4.2, and 1.4 for every subscriber). Clones share the same
/// underlying error: [`Error::ptr_eq`] tells whether two handles came from one failure.
///
/// `Display` and `Debug` show the wrapped error; [`source`](std::error::Error::source) is the
/// wrapped error's own source; [`Error::downcast_ref`] recovers the concrete type.
///
/// # Examples
///
/// ```
/// use rs_api::{Error, SpecViolation};
///
/// let e = Error::from(SpecViolation::NonPositiveRequest);
/// let copy = e.clone();
/// assert!(e.ptr_eq(&copy));
/// assert!(e.to_string().contains("3.9"));
/// assert_eq!(e.spec_violation(), Some(&SpecViolation::NonPositiveRequest));
///
/// let io = Error::new(std::io::Error::other("disk gone"));
/// assert!(io.is::<std::io::Error>());
/// assert_eq!(io.to_string(), "disk gone");
/// ```
#[derive(Clone)]
pub struct Error {
    inner: Arc<dyn std::error::Error + Send + Sync + 'static>,
}

impl Error {
    /// Wraps any error value.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = rs_api::Error::new(std::fmt::Error);
    /// assert!(e.is::<std::fmt::Error>());
    /// ```
    pub fn new<E>(error: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Self {
            inner: Arc::new(error),
        }
    }

    /// Builds an error from a message alone (the `Display` of the result is the message).
    ///
    /// # Examples
    ///
    /// ```
    /// let e = rs_api::Error::msg("upstream closed");
    /// assert_eq!(e.to_string(), "upstream closed");
    /// ```
    pub fn msg<M>(message: M) -> Self
    where
        M: fmt::Display + fmt::Debug + Send + Sync + 'static,
    {
        Self::new(MessageError(message))
    }

    /// Wraps an error that is already shared.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let shared: Arc<dyn std::error::Error + Send + Sync> = Arc::new(std::fmt::Error);
    /// let e = rs_api::Error::from_arc(shared.clone());
    /// assert!(e.is::<std::fmt::Error>());
    /// ```
    pub fn from_arc(inner: Arc<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        Self { inner }
    }

    /// Returns the wrapped error if it has type `E`.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = rs_api::Error::new(std::io::Error::other("x"));
    /// assert_eq!(e.downcast_ref::<std::io::Error>().unwrap().kind(), std::io::ErrorKind::Other);
    /// assert!(e.downcast_ref::<std::fmt::Error>().is_none());
    /// ```
    pub fn downcast_ref<E>(&self) -> Option<&E>
    where
        E: std::error::Error + 'static,
    {
        let inner: &(dyn std::error::Error + 'static) = &*self.inner;
        inner.downcast_ref::<E>()
    }

    /// Whether the wrapped error has type `E`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_api::Error::new(std::fmt::Error).is::<std::fmt::Error>());
    /// ```
    pub fn is<E>(&self) -> bool
    where
        E: std::error::Error + 'static,
    {
        self.downcast_ref::<E>().is_some()
    }

    /// The wrapped [`SpecViolation`], if this error reports one.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, SpecViolation};
    /// let e: Error = SpecViolation::NonPositiveRequest.into();
    /// assert_eq!(e.spec_violation().map(SpecViolation::rule), Some("3.9"));
    /// ```
    pub fn spec_violation(&self) -> Option<&SpecViolation> {
        self.downcast_ref::<SpecViolation>()
    }

    /// Whether both handles share one underlying error (they are clones of one another).
    ///
    /// # Examples
    ///
    /// ```
    /// let a = rs_api::Error::msg("boom");
    /// let b = rs_api::Error::msg("boom");
    /// assert!(a.ptr_eq(&a.clone()));
    /// assert!(!a.ptr_eq(&b));
    /// ```
    pub fn ptr_eq(&self, other: &Error) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The shared error behind this handle.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = rs_api::Error::msg("boom");
    /// assert_eq!(e.as_arc().to_string(), "boom");
    /// ```
    pub fn as_arc(&self) -> &Arc<dyn std::error::Error + Send + Sync + 'static> {
        &self.inner
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.inner, f)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.inner, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.source()
    }
}

impl From<SpecViolation> for Error {
    fn from(v: SpecViolation) -> Self {
        Error::new(v)
    }
}

impl From<&'static str> for Error {
    fn from(m: &'static str) -> Self {
        Error::msg(m)
    }
}

impl From<String> for Error {
    fn from(m: String) -> Self {
        Error::msg(m)
    }
}

/// An error that is only a message.
struct MessageError<M>(M);

impl<M: fmt::Display> fmt::Display for MessageError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<M: fmt::Debug> fmt::Debug for MessageError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<M: fmt::Display + fmt::Debug> std::error::Error for MessageError<M> {}

/// A violation of the Reactive Streams specification, as reported by this project's
/// implementations. Each message names the rule.
///
/// # Examples
///
/// ```
/// use rs_api::SpecViolation;
/// let msg = SpecViolation::NonPositiveRequest.to_string();
/// assert!(msg.contains("3.9") && msg.contains("non-positive subscription request"));
/// assert!(!msg.contains("request(0)"), "a bridged request(-5) is not a request(0)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecViolation {
    /// A non-positive demand was requested (rule 3.9): `request(0)` in Rust, or any
    /// `request(n)` with `n <= 0` that a bridge from the JVM mapped to `0`. The subscription
    /// is cancelled and the subscriber receives this error through `on_error`. The message does
    /// not claim the request was `0`.
    #[error("rule 3.9 violated: non-positive subscription request: demand must be at least 1")]
    NonPositiveRequest,

    /// A subscriber's signal method panicked (rule 2.13). The publisher treated the
    /// subscription as cancelled; this value reports the panic.
    #[error("rule 2.13 violated: the subscriber panicked in {signal}: {message}")]
    SubscriberPanicked {
        /// The signal during which the panic happened (`"on_next"`, …).
        signal: &'static str,
        /// The panic payload, when it was a string.
        message: String,
    },

    /// The publisher refused a subscriber (rule 1.9: a rejection is signalled as `on_error`
    /// after `on_subscribe`), for example a unicast publisher asked for a second subscriber.
    #[error("rule 1.9: the publisher rejected the subscriber: {reason}")]
    Rejected {
        /// Why the publisher refused.
        reason: String,
    },
}

impl SpecViolation {
    /// The number of the rule this violation breaks, such as `"3.9"`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_api::SpecViolation::NonPositiveRequest.rule(), "3.9");
    /// ```
    pub fn rule(&self) -> &'static str {
        match self {
            SpecViolation::NonPositiveRequest => "3.9",
            SpecViolation::SubscriberPanicked { .. } => "2.13",
            SpecViolation::Rejected { .. } => "1.9",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_send_sync_static_clone() {
        fn assert_bounds<T: Send + Sync + Clone + 'static>() {}
        assert_bounds::<Error>();
    }

    #[test]
    fn source_is_forwarded() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::fmt::Error);
        let e = Error::new(Outer(std::fmt::Error));
        let src = std::error::Error::source(&e).expect("source");
        assert!(src.is::<std::fmt::Error>());
    }
}
