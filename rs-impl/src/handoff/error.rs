//! [`CompatError`]: the failures of the bridges themselves — the publisher → `Stream`
//! bridges of [`crate::compat`] and the external subscriber of [`crate::subscriber`], both
//! built on this hand-off — and [`into_error`], which turns a stream's or a sink's error into
//! the contract's. They are defined here, below every bridge (compat re-exports them), so
//! that no bridge has to import another's module for them.

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

/// Turns a stream's or a sink's error into the contract's [`Error`](rs_api::Error) without
/// wrapping one that is an `Error` already (so downcasting sees the original).
pub(crate) fn into_error<E>(error: E) -> rs_api::Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    let mut slot = Some(error);
    if let Some(same) =
        (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<rs_api::Error>>()
    {
        if let Some(e) = same.take() {
            return e;
        }
    }
    match slot {
        Some(e) => rs_api::Error::new(e),
        None => unreachable!("taken only when it is an Error"),
    }
}
