//! `rs_impl`'s processors, in the identity-processor verification and in the loom mode.
//!
//! | implementation | verification | notes |
//! |---|---|---|
//! | `processor::IdentityProcessor` | identity processor | buffer 16, `does_coordinated_emission() = true`, failed publisher: a processor subscribed to `source::failed` |

use rs_api::{Error, Processor, Publisher, PublisherExt};
use rs_impl::processor::IdentityProcessor;
use rs_tck::loom;
use rs_tck::processor::{self, IdentityProcessorVerification};
use rs_tck::suite::Suite;

/// The processor suites.
pub(crate) fn suites() -> Vec<Suite> {
    vec![processor::verify("processor::IdentityProcessor", Identity)]
}

/// The loom suites, over the same verifications.
pub(crate) fn loom_suites() -> Vec<Suite> {
    vec![loom::verify_processor(
        "processor::IdentityProcessor",
        Identity,
    )]
}

/// `rs_impl::processor::IdentityProcessor`.
#[derive(Debug, Clone, Copy)]
struct Identity;

impl IdentityProcessorVerification for Identity {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        IdentityProcessor::new(buffer_size)
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        let p = IdentityProcessor::new(processor::DEFAULT_BUFFER_SIZE);
        rs_impl::source::failed::<u64>(Error::msg("rs-tck: the failed publisher"))
            .subscribe_with(p.clone());
        Some(p)
    }

    fn does_coordinated_emission(&self) -> bool {
        true
    }
}
