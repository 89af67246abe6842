//! [`CompatError`]: the failures of the bridges themselves — the publisher → `Stream`
//! bridges of [`crate::compat`] and the external subscriber of [`crate::subscriber`], both
//! built on this hand-off. It is defined here, below both (compat re-exports it), so that
//! neither has to import the other.

/// The failures of the bridges themselves.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompatError {
    /// The publisher sent more elements than were requested (rule 1.1); the one that did not
    /// fit was dropped and the subscription cancelled.
    #[error(
        "rule 1.1 violated: the publisher sent more elements than requested \
         (the stream's buffer of {capacity} was full); upstream cancelled"
    )]
    Overflow {
        /// The buffer's capacity.
        capacity: usize,
    },
    /// The publisher dropped the subscriber without a terminal signal (rule 1.6 and 3.13 allow
    /// that only after a cancel).
    #[error("the publisher dropped the subscriber without a terminal signal")]
    Dropped,
    /// The executor dropped the adapter's task before the end (it shut down, or refused the
    /// task).
    #[error("the executor dropped the adapter's task before the end (shut down, or refused it)")]
    TaskDropped,
    /// The stream panicked in `poll_next`.
    #[error("the stream panicked: {message}")]
    StreamPanicked {
        /// The panic's message.
        message: String,
    },
    /// An async callback (or the sink) panicked; upstream was cancelled.
    #[error("rule 2.13: the async subscriber panicked: {message}; upstream cancelled")]
    SubscriberPanicked {
        /// The panic's message.
        message: String,
    },
}

impl From<CompatError> for rs_api::Error {
    fn from(e: CompatError) -> Self {
        rs_api::Error::new(e)
    }
}
