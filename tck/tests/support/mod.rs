//! Shared pieces of the self-tests: deliberately broken implementations built from small
//! configurable knobs.

pub(crate) mod broken_publisher;
pub(crate) mod expect;
