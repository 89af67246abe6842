//! [`FanoutError`]: why a fanout ended a subscriber that had done nothing wrong.

use std::time::Duration;

/// Why a fanout ended a subscriber that had done nothing wrong, as delivered in `on_error`
/// (a producer that vanished ends the stream with
/// [`ProducerError`](crate::producer::ProducerError) instead).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::fanout::{self, FanoutConfig, FanoutError, LastSubscriberPolicy};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let config = FanoutConfig::new(4).last_subscriber(LastSubscriberPolicy::CancelUpstream);
/// let (tx, publisher) = fanout::channel_with::<u8>(config);
/// let (first, h) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(first));
/// h.cancel(); // the last subscriber leaves: this policy shuts the channel down
/// assert!(tx.is_closed());
/// let (late, result) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(late));
/// let e = result.wait().unwrap_err();
/// assert_eq!(e.downcast_ref::<FanoutError>(), Some(&FanoutError::ShutDown));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FanoutError {
    /// The last subscriber left and the fanout shut down, as its
    /// [`LastSubscriberPolicy::CancelUpstream`](super::LastSubscriberPolicy::CancelUpstream)
    /// says (the processor's default).
    #[error(
        "the fanout shut down when its last subscriber left (LastSubscriberPolicy::CancelUpstream): \
         it cancelled its upstream (or closed its channel) and dropped its buffer"
    )]
    ShutDown,
    /// Every publisher handle of a channel was dropped while no subscriber was left: nobody
    /// can receive its elements any more, so the channel closed instead of letting its
    /// producer wait forever.
    #[error(
        "every publisher handle of the fanout channel was dropped while no subscriber was left: \
         nobody can receive, so the channel closed"
    )]
    PublishersDropped,
    /// Nobody subscribed in time ([`TimeoutMode::Cancel`](super::TimeoutMode::Cancel)).
    #[error("no subscriber joined the fanout within {0:?}: it cancelled its upstream (or closed its channel)")]
    SubscriptionTimeout(Duration),
    /// The processor's upstream sent more elements than requested (rule 1.1).
    #[error("rule 1.1 violated by the fanout's upstream: more elements than requested")]
    UpstreamOverflow,
}

impl From<FanoutError> for rs_api::Error {
    fn from(e: FanoutError) -> Self {
        rs_api::Error::new(e)
    }
}
